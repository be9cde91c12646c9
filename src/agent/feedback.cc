#include "agent/feedback.h"

#include <algorithm>

#include "agent/rules_prompt.h"
#include "common/format.h"
#include "common/text.h"

namespace mgk::agent {
namespace {

std::string without_final_newlines(std::string s) {
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

std::string size_table(const eval::EvalResult& r) {
  std::string t =
      "| size | reference µs | yours µs | speedup | roofline µs | fraction of roofline | bound | floor µs |\n"
      "|---|---|---|---|---|---|---|---|\n";
  for (const auto& s : r.sizes) {
    auto median = [](const std::optional<eval::Timing>& tm) {
      return tm ? fixed(tm->median_us, 1) : std::string("-");
    };
    t += "| " + s.size + " | " + median(s.reference) + " | " + median(s.candidate) + " | " +
         (s.candidate ? fixed(s.speedup, 2) + "×" : "-") + " | " +
         (s.roofline_us > 0 ? fixed(s.roofline_us, 1) : "-") + " | " +
         (s.roofline_fraction ? fixed(*s.roofline_fraction, 2) : "-") + " | " +
         (s.roofline_bound.empty() ? "-" : s.roofline_bound) + " | " + median(s.floor) + " |\n";
  }
  return t;
}

std::string per_rank_times(const eval::EvalResult& r) {
  std::string out;
  for (const auto& s : r.sizes) {
    if (!s.candidate || s.candidate->per_rank_median_us.empty()) continue;
    out += "- " + s.size + ":";
    const auto& v = s.candidate->per_rank_median_us;
    for (size_t rank = 0; rank < v.size(); ++rank)
      out += (rank ? ", " : " ") + std::string("rank ") + std::to_string(rank) + " " + fixed(v[rank], 1);
    out += "\n";
  }
  if (!out.empty()) out.pop_back();
  return out;
}

// The evaluator's mismatch report is a JSON object (output, rank, index, got, expected,
// bound, failures, numel, ...); the known fields become a sentence, the rest is quoted.
std::string describe_mismatch(const std::string& report) {
  nlohmann::json m = nlohmann::json::parse(report, nullptr, /*allow_exceptions=*/false);
  if (!m.is_object() || !m.contains("output"))
    return "```\n" + cut_middle(report, 4000, 2000) + "\n```";
  std::string out = "first wrong element: output `" + m.value("output", std::string()) + "`";
  if (m.contains("rank")) out += ", rank " + m["rank"].dump();
  if (m.contains("index")) out += ", index " + (m["index"].is_string() ? m["index"].get<std::string>() : m["index"].dump());
  if (m.contains("got")) out += ": got " + m["got"].dump();
  if (m.contains("expected")) out += ", expected " + m["expected"].dump();
  if (m.contains("bound") && m["bound"].is_number() && m["bound"].get<double>() > 0)
    out += " (allowed error " + m["bound"].dump() + ")";
  if (m.contains("failures") && m.contains("numel"))
    out += "; " + m["failures"].dump() + " of " + m["numel"].dump() + " elements wrong";
  for (const char* known : {"output", "rank", "index", "got", "expected", "bound", "failures", "numel"})
    m.erase(known);
  if (!m.empty()) out += "\n  also: " + cut_middle(m.dump(), 2000, 1000);
  return out;
}

std::string mismatch_report(const eval::EvalResult& r) {
  std::string out;
  auto report = [&](const std::vector<eval::SizeResult>& sizes, const std::string& where) {
    for (const auto& s : sizes) {
      if (s.correct) {
        out += "- " + where + "size " + s.size + ": correct\n";
        continue;
      }
      out += "- " + where + "size " + s.size + ": " + (s.failure.empty() ? "wrong" : s.failure) + " (" +
             std::to_string(s.trials_passed) + " trial(s) passed before)\n";
      if (!s.mismatch.empty()) out += "  " + describe_mismatch(s.mismatch) + "\n";
    }
  };
  report(r.sizes, r.structure_checks.empty() ? "" : "W = " + std::to_string(r.world_size) + ", ");
  for (const auto& c : r.structure_checks) report(c.sizes, "W = " + std::to_string(c.world) + " (ranks sharing GPUs), ");
  return out;
}

}  // namespace

bool timed(const eval::EvalResult& result) {
  if (result.sizes.empty()) return false;
  for (const auto& s : result.sizes)
    if (!s.candidate) return false;
  return true;
}

std::optional<double> min_speedup(const eval::EvalResult& result) {
  if (result.verdict != eval::Verdict::kCorrect || !timed(result)) return std::nullopt;
  double m = result.sizes.front().speedup;
  for (const auto& s : result.sizes) m = std::min(m, s.speedup);
  return m;
}

std::string feedback_template(const eval::EvalResult& result) {
  switch (result.verdict) {
    case eval::Verdict::kCorrect: {
      auto m = min_speedup(result);
      if (!m) return "feedback/correct_untimed";
      return *m > 1.0 ? "feedback/correct_fast" : "feedback/correct_slow";
    }
    case eval::Verdict::kIncorrect: return "feedback/mismatch";
    case eval::Verdict::kCompileError:
      return result.refused_rule.empty() ? "feedback/compile_error" : "feedback/refused";
    case eval::Verdict::kRuntimeError:
      return result.refused_rule.empty() ? "feedback/runtime_error" : "feedback/refused";
    case eval::Verdict::kTimeout: return "feedback/hang";
    case eval::Verdict::kCompiled: return "feedback/compiled";
    case eval::Verdict::kInfrastructure: return "feedback/infrastructure";
  }
  return "feedback/infrastructure";
}

TemplateVars feedback_vars(const eval::EvalResult& result, int turn, int max_turns) {
  TemplateVars v;
  v["turn"] = std::to_string(turn);
  v["max_turns"] = std::to_string(max_turns);
  v["message"] = result.message;
  v["phase"] = result.phase;
  v["compile_log"] = without_final_newlines(cut_middle(result.compile_log, 8000, 4000));
  // The runtime log of a failing rank, when the evaluator kept one, is in the message; the
  // size entries' failure lines say which preset failed.
  std::string log;
  for (const auto& s : result.sizes)
    if (!s.failure.empty()) log += s.size + ": " + s.failure + "\n";
  v["log"] = without_final_newlines(log);
  v["report"] = without_final_newlines(mismatch_report(result));
  v["size_table"] = without_final_newlines(size_table(result));
  v["per_rank"] = per_rank_times(result);
  auto m = min_speedup(result);
  v["min_speedup"] = m ? fixed(*m, 2) : "-";
  v["world_size"] = std::to_string(result.world_size);
  std::string sizes;
  for (const auto& s : result.sizes) sizes += (sizes.empty() ? "" : ", ") + s.size;
  v["sizes"] = sizes;
  return v;
}

std::string render_feedback(const PromptLibrary& prompts, const eval::EvalResult& result,
                            int turn, int max_turns) {
  TemplateVars v = feedback_vars(result, turn, max_turns);
  if (!result.refused_rule.empty()) {
    v["rule"] = rule_text(prompts, result.refused_rule);
    v["while_running"] = result.verdict == eval::Verdict::kRuntimeError ? "1" : "";
  }
  return prompts.render(feedback_template(result), v);
}

std::string verdict_summary(const eval::EvalResult& result) {
  auto m = min_speedup(result);
  if (m) return std::string("correct ") + fixed(*m, 2) + "x";
  if (result.verdict == eval::Verdict::kCorrect) return "correct (not timed)";
  return eval::to_string(result.verdict);
}

}  // namespace mgk::agent
