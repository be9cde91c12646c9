#include "results/eval_result.h"

#include <algorithm>

#include "common/error.h"

namespace mgk::results {

namespace {

// The JSON form's version: 2 since the refusal became a field (2026-12-03); 1 (or none) before.
constexpr int kSchemaVersion = 2;

constexpr std::pair<Verdict, const char*> kNames[] = {
    {Verdict::kCorrect, "correct"},         {Verdict::kIncorrect, "incorrect"},
    {Verdict::kCompileError, "compile_error"}, {Verdict::kRuntimeError, "runtime_error"},
    {Verdict::kTimeout, "timeout"},         {Verdict::kInfrastructure, "infrastructure"},
    {Verdict::kCompiled, "compiled"},
};

nlohmann::json timing_json(const Timing& t) {
  return {{"median_us", t.median_us}, {"p10_us", t.p10_us},         {"p90_us", t.p90_us},
          {"min_us", t.min_us},       {"iterations", t.iterations}, {"per_rank_median_us", t.per_rank_median_us}};
}

Timing timing_from(const nlohmann::json& j) {
  Timing t;
  t.median_us = j.value("median_us", 0.0);
  t.p10_us = j.value("p10_us", 0.0);
  t.p90_us = j.value("p90_us", 0.0);
  t.min_us = j.value("min_us", 0.0);
  t.iterations = j.value("iterations", 0);
  t.per_rank_median_us = j.value("per_rank_median_us", std::vector<double>{});
  return t;
}
// A stored mismatch of another shape (hand-written, or from a version before the protocol
// typed it) is left out, not fatal: it cannot be said as one.
std::optional<wire::Mismatch> mismatch_from(const nlohmann::json& j) {
  if (!j.is_object()) return std::nullopt;
  try {
    return wire::mismatch_from_json(j);
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

std::string number(double v) { return nlohmann::json(v).dump(); }

nlohmann::json sizes_json(const std::vector<SizeResult>& sizes) {
  nlohmann::json sj = nlohmann::json::array();
  for (const auto& s : sizes) {
    nlohmann::json j{{"size", s.size},
                     {"correct", s.correct},
                     {"trials_passed", s.trials_passed},
                     {"failure", s.failure},
                     {"failure_kind", s.failure_kind},
                     {"timed_calls_checked", s.timed_calls_checked},
                     {"worst_error_ratio", s.worst_error_ratio},
                     {"reference_worst_error_ratio", s.reference_worst_error_ratio},
                     {"speedup", s.speedup},
                     {"credible", s.credible},
                     {"not_credible", s.not_credible},
                     {"roofline_us", s.roofline_us},
                     {"roofline_bound", s.roofline_bound},
                     {"link_bytes", s.link_bytes}};
    j["mismatch"] = s.mismatch ? wire::to_json(*s.mismatch) : nlohmann::json(nullptr);
    j["reference"] = s.reference ? timing_json(*s.reference) : nlohmann::json(nullptr);
    j["candidate"] = s.candidate ? timing_json(*s.candidate) : nlohmann::json(nullptr);
    j["floor"] = s.floor ? timing_json(*s.floor) : nlohmann::json(nullptr);
    j["outside"] = s.outside ? timing_json(*s.outside) : nlohmann::json(nullptr);
    j["roofline_fraction"] = s.roofline_fraction ? nlohmann::json(*s.roofline_fraction) : nlohmann::json(nullptr);
    sj.push_back(j);
  }
  return sj;
}

std::vector<SizeResult> sizes_from(const nlohmann::json& array) {
  std::vector<SizeResult> sizes;
  for (const auto& sj : array) {
    SizeResult s;
    s.size = sj.value("size", "");
    s.correct = sj.value("correct", false);
    s.trials_passed = sj.value("trials_passed", 0);
    s.failure = sj.value("failure", "");
    s.failure_kind = sj.value("failure_kind", "");
    s.timed_calls_checked = sj.value("timed_calls_checked", 0);
    s.worst_error_ratio = sj.value("worst_error_ratio", 0.0);
    s.reference_worst_error_ratio = sj.value("reference_worst_error_ratio", 0.0);
    s.credible = sj.value("credible", true);
    s.not_credible = sj.value("not_credible", "");
    s.mismatch = mismatch_from(sj.value("mismatch", nlohmann::json()));
    if (sj.contains("reference") && !sj["reference"].is_null()) s.reference = timing_from(sj["reference"]);
    if (sj.contains("candidate") && !sj["candidate"].is_null()) s.candidate = timing_from(sj["candidate"]);
    if (sj.contains("floor") && !sj["floor"].is_null()) s.floor = timing_from(sj["floor"]);
    if (sj.contains("outside") && !sj["outside"].is_null()) s.outside = timing_from(sj["outside"]);
    s.speedup = sj.value("speedup", 0.0);
    if (sj.contains("roofline_fraction") && !sj["roofline_fraction"].is_null())
      s.roofline_fraction = sj["roofline_fraction"].get<double>();
    s.roofline_us = sj.value("roofline_us", 0.0);
    s.roofline_bound = sj.value("roofline_bound", "");
    s.link_bytes = sj.value("link_bytes", 0.0);
    sizes.push_back(std::move(s));
  }
  return sizes;
}
}  // namespace

const char* to_string(Verdict v) {
  for (const auto& [k, n] : kNames)
    if (k == v) return n;
  return "unknown";
}

Verdict verdict_from_string(const std::string& s) {
  for (const auto& [k, n] : kNames)
    if (s == n) return k;
  throw Error("unknown verdict '" + s + "'");
}

std::string describe(const wire::Mismatch& m) {
  std::string out = "output '" + m.output + "' rank " + std::to_string(m.rank) + " index " + m.index + ": got " +
                    (m.got ? number(*m.got) : "nan") + ", expected " + number(m.expected);
  if (m.bound > 0) out += " (allowed error " + number(m.bound) + ")";
  return out + "; " + std::to_string(m.failures) + " of " + std::to_string(m.numel) + " elements wrong";
}

std::optional<double> SizeResult::credited_speedup() const {
  if (!candidate || !credible || speedup <= 0) return std::nullopt;
  return speedup;
}

bool EvalResult::credible() const {
  return std::all_of(sizes.begin(), sizes.end(), [](const SizeResult& s) { return !s.candidate || s.credible; });
}

std::vector<double> EvalResult::speedups() const {
  std::vector<double> out;
  if (verdict != Verdict::kCorrect || sizes.empty()) return out;
  for (const SizeResult& s : sizes) {
    const std::optional<double> x = s.credited_speedup();
    if (!x) return {};
    out.push_back(*x);
  }
  return out;
}

std::optional<double> EvalResult::speedup() const {
  const std::vector<double> s = speedups();
  if (s.empty()) return std::nullopt;
  return *std::min_element(s.begin(), s.end());
}

nlohmann::json EvalResult::to_json() const {
  nlohmann::json checks = nlohmann::json::array();
  for (const auto& c : structure_checks)
    checks.push_back({{"world", c.world}, {"gpus", c.gpus}, {"sizes", sizes_json(c.sizes)}});
  return {{"schema_version", kSchemaVersion},
          {"verdict", to_string(verdict)}, {"message", message},       {"problem", problem},
          {"world_size", world_size},      {"gpus", gpus},             {"kernel_hash", kernel_hash},
          {"build_key", build_key},        {"isolation", isolation},   {"write_guard", write_guard},
          {"timed", timed},
          {"not_timed", not_timed},        {"refused", refused},       {"refused_rule", refused_rule},
          {"compile_log", compile_log},    {"compile_seconds", compile_seconds},
          {"compile_cached", compile_cached}, {"wall_seconds", wall_seconds}, {"phase", phase},
          {"protocol_overhead_us", protocol_overhead_us}, {"protocol_spread_us", protocol_spread_us},
          {"provenance", provenance},
          {"sizes", sizes_json(sizes)},    {"structure_checks", checks}};
}

EvalResult EvalResult::from_json(const nlohmann::json& j) {
  EvalResult r;
  r.verdict = verdict_from_string(j.value("verdict", "infrastructure"));
  r.message = j.value("message", "");
  r.problem = j.value("problem", "");
  r.world_size = j.value("world_size", 0);
  r.gpus = j.value("gpus", std::vector<int>{});
  r.kernel_hash = j.value("kernel_hash", "");
  r.build_key = j.value("build_key", "");
  r.isolation = j.value("isolation", "");
  r.write_guard = j.value("write_guard", "");
  r.timed = j.value("timed", false);
  r.not_timed = j.value("not_timed", "");
  r.refused_rule = j.value("refused_rule", "");
  r.refused = j.value("refused", false);
  r.compile_log = j.value("compile_log", "");
  r.compile_seconds = j.value("compile_seconds", 0.0);
  r.compile_cached = j.value("compile_cached", false);
  r.wall_seconds = j.value("wall_seconds", 0.0);
  r.phase = j.value("phase", "");
  r.protocol_overhead_us = j.value("protocol_overhead_us", 0.0);
  r.protocol_spread_us = j.value("protocol_spread_us", 0.0);
  r.provenance = j.value("provenance", nlohmann::json::object());
  r.sizes = sizes_from(j.value("sizes", nlohmann::json::array()));
  for (const auto& cj : j.value("structure_checks", nlohmann::json::array()))
    r.structure_checks.push_back({cj.value("world", 0), cj.value("gpus", std::vector<int>{}),
                                  sizes_from(cj.value("sizes", nlohmann::json::array()))});
  return r;
}

}  // namespace mgk::results
