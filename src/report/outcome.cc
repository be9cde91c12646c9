#include "report/outcome.h"

#include "eval/evaluate.h"
#include "report/statistics.h"

#include <algorithm>

namespace mgk::report {
namespace {

struct OutcomeName {
  Outcome outcome;
  const char* id;
  const char* words;
};
constexpr OutcomeName kNames[] = {
    {Outcome::kCorrect, "correct", "correct"},
    {Outcome::kCompiled, "compiled", "compiled (not run)"},
    {Outcome::kWrong, "wrong", "wrong"},
    {Outcome::kHang, "hang", "hang"},
    {Outcome::kCrash, "crash", "crash"},
    {Outcome::kDidNotCompile, "did_not_compile", "did not compile"},
    {Outcome::kRefused, "refused", "refused"},
    {Outcome::kNoKernel, "no_kernel", "no kernel"},
    {Outcome::kInfrastructure, "infrastructure", "infrastructure"},
    {Outcome::kUnfinished, "unfinished", "unfinished"},
};

Outcome outcome_of(const store::EvaluationRecord& e) {
  if (e.verdict == "correct") return Outcome::kCorrect;
  if (e.verdict == "compiled") return Outcome::kCompiled;
  if (e.verdict == "incorrect") return Outcome::kWrong;
  if (e.verdict == "timeout") return Outcome::kHang;
  // The evaluator words its refusals so: the checks of the source and the built library
  // (compile_error), the candidate process's system-call filter (runtime_error).
  const bool refused = e.message.rfind("refused", 0) == 0;
  if (e.verdict == "runtime_error") return refused ? Outcome::kRefused : Outcome::kCrash;
  if (e.verdict == "compile_error") return refused ? Outcome::kRefused : Outcome::kDidNotCompile;
  return Outcome::kInfrastructure;
}

std::optional<double> median_roofline(const nlohmann::json& result) {
  std::vector<double> f;
  for (const auto& s : result.value("sizes", nlohmann::json::array()))
    if (s.contains("roofline_fraction") && s["roofline_fraction"].is_number())
      f.push_back(s["roofline_fraction"].get<double>());
  return median(f);
}

}  // namespace

const char* to_string(Outcome o) {
  for (const auto& n : kNames)
    if (n.outcome == o) return n.id;
  return "unknown";
}

const char* describe(Outcome o) {
  for (const auto& n : kNames)
    if (n.outcome == o) return n.words;
  return "unknown";
}

std::vector<Outcome> all_outcomes() {
  std::vector<Outcome> out;
  for (const auto& n : kNames) out.push_back(n.outcome);
  return out;
}

bool compiled_something(Outcome o) {
  return o == Outcome::kCorrect || o == Outcome::kCompiled || o == Outcome::kWrong || o == Outcome::kHang ||
         o == Outcome::kCrash;
}

std::string category_of(const std::string& problem) { return problem.substr(0, problem.find('/')); }

std::string no_speedup_because(const AttemptResult& r) {
  if (r.outcome != Outcome::kCorrect || r.speedup) return "";
  if (!r.timed) return r.not_timed_because == "not timed" ? "not timed" : "not timed: " + r.not_timed_because;
  return r.credible ? "no speedup" : "timed under the timing floor";
}

bool faster_than(const AttemptResult& r, double p) {
  return r.outcome == Outcome::kCorrect && r.timed && r.speedup && *r.speedup > p;
}

namespace {

// From the stored result as the evaluator typed it (eval::EvalResult::from_json).
std::vector<SizeTiming> size_timings(const nlohmann::json& result) {
  std::vector<SizeTiming> out;
  for (const eval::SizeResult& s : eval::EvalResult::from_json(result).sizes) {
    SizeTiming t;
    t.size = s.size;
    if (s.reference) t.reference_us = s.reference->median_us;
    if (s.candidate) t.kernel_us = s.candidate->median_us;
    if (s.credible && s.speedup > 0) t.speedup = s.speedup;
    if (s.link_bytes > 0 && t.kernel_us && *t.kernel_us > 0 && t.speedup)
      t.link_gbps = s.link_bytes / (*t.kernel_us * 1e-6) / 1e9;
    out.push_back(t);
  }
  return out;
}

}  // namespace

AttemptResult classify(const AttemptData& a) {
  const store::AttemptSummary& s = a.summary;
  AttemptResult r;
  r.attempt_id = s.id;
  r.problem = s.problem;
  r.category = category_of(s.problem);
  r.sample = s.sample;
  r.world_size = s.world_size;
  r.exit_reason = s.exit_reason;
  r.turns = int(a.turns.size());
  r.tokens_in = s.tokens_in;
  r.tokens_out = s.tokens_out;
  r.cost_usd = s.cost_usd;
  for (const TurnView& t : a.turns) r.wall_s += t.latency_s;

  const store::EvaluationRecord* best = nullptr;  // the evaluation the outcome rests on
  for (const store::EvaluationRecord& e : a.evaluations) {
    const double eval_s = e.result.value("wall_seconds", 0.0);
    r.wall_s += eval_s > 0 ? eval_s : e.result.value("compile_seconds", 0.0);
    if (!best || outcome_of(e) < outcome_of(*best)) {
      best = &e;
    } else if (outcome_of(e) == Outcome::kCorrect && e.speedup_min &&
               (!best->speedup_min || *e.speedup_min > *best->speedup_min)) {
      best = &e;  // among correct kernels the fastest; among untimed ones the first
    }
  }
  for (const TurnView& t : a.turns) {
    TurnVerdict v{t.index, t.action, "", "", std::nullopt, false};
    for (const auto& e : a.evaluations)
      if (e.turn_index == t.index) {
        v.verdict = e.verdict, v.message = e.message, v.speedup = e.speedup_min;
        const nlohmann::json sizes = e.result.value("sizes", nlohmann::json::array());
        v.timed = e.speedup_min.has_value() || std::any_of(sizes.begin(), sizes.end(), store::candidate_timed);
      }
    r.turn_verdicts.push_back(v);
  }

  // An attempt the provider or the evaluator cut short says nothing of the model unless it
  // already has a correct kernel: its wrong kernel of an earlier turn is not its last word.
  const bool cut_short = s.status == store::Status::kFailed || s.exit_reason == "api_error";
  if (s.status == store::Status::kRunning || s.status == store::Status::kInterrupted) {
    r.outcome = Outcome::kUnfinished;
  } else if (best && (!cut_short || outcome_of(*best) == Outcome::kCorrect)) {
    r.outcome = outcome_of(*best);
  } else {
    r.outcome = cut_short || best ? Outcome::kInfrastructure : Outcome::kNoKernel;
  }
  if (best) {
    r.kernel_hash = best->kernel_hash;
    if (auto it = a.sources.find(best->kernel_hash); it != a.sources.end()) r.features = detect_features(it->second);
  }
  if (best && outcome_of(*best) == Outcome::kCorrect) {
    // Read from the result, not the stored column: rows written before the floor rule kept
    // the credible sizes' speedups of a kernel timed under the floor at another size.
    const nlohmann::json sizes = best->result.value("sizes", nlohmann::json::array());
    r.credible = std::none_of(sizes.begin(), sizes.end(), store::timed_below_floor);
    r.timed = best->speedup_min.has_value() || std::any_of(sizes.begin(), sizes.end(), store::candidate_timed);
    if (r.credible) r.speedup = best->speedup_min;
    if (r.timed) r.roofline_fraction = median_roofline(best->result);
    if (r.timed) r.sizes = size_timings(best->result);
    else r.not_timed_because = eval::ranks_share_gpu(best->gpus) ? "ranks shared a GPU" : "not timed";
  } else if (best && outcome_of(*best) == Outcome::kCompiled) {
    r.not_timed_because = "compile only";
  }
  return r;
}

}  // namespace mgk::report
