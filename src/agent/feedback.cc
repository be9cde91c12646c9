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

std::string size_table(const results::EvalResult& r) {
  std::string t =
      "| size | reference µs | yours µs | speedup | roofline µs | fraction of roofline | bound | floor µs |\n"
      "|---|---|---|---|---|---|---|---|\n";
  for (const auto& s : r.sizes) {
    auto median = [](const std::optional<results::Timing>& tm) {
      return tm ? fixed(tm->median_us, 1) : std::string("-");
    };
    t += "| " + s.size + " | " + median(s.reference) + " | " + median(s.candidate) + " | " +
         (s.credited_speedup() ? fixed(*s.credited_speedup(), 2) + "×" : s.candidate ? "not credible" : "-") + " | " +
         (s.roofline_us > 0 ? fixed(s.roofline_us, 1) : "-") + " | " +
         (s.roofline_fraction ? fixed(*s.roofline_fraction, 2) : "-") + " | " +
         (s.roofline_bound.empty() ? "-" : s.roofline_bound) + " | " + median(s.floor) + " |\n";
  }
  return t;
}

std::string per_rank_times(const results::EvalResult& r) {
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

std::string mismatch_report(const results::EvalResult& r) {
  std::string out;
  auto report = [&](const std::vector<results::SizeResult>& sizes, const std::string& where) {
    for (const auto& s : sizes) {
      if (s.correct) {
        out += "- " + where + "size " + s.size + ": correct\n";
        continue;
      }
      out += "- " + where + "size " + s.size + ": " + (s.failure.empty() ? "wrong" : s.failure) + " (" +
             std::to_string(s.trials_passed) + " trial(s) passed before)\n";
      if (s.mismatch) out += "  first wrong element: " + results::describe(*s.mismatch) + "\n";
    }
  };
  report(r.sizes, r.structure_checks.empty() ? "" : "W = " + std::to_string(r.world_size) + ", ");
  for (const auto& c : r.structure_checks) report(c.sizes, "W = " + std::to_string(c.world) + " (ranks sharing GPUs), ");
  return out;
}

}  // namespace

std::string feedback_template(const results::EvalResult& result) {
  switch (result.verdict) {
    case results::Verdict::kCorrect: {
      if (const auto m = result.speedup()) return *m > 1.0 ? "feedback/correct_fast" : "feedback/correct_slow";
      return result.credible() ? "feedback/correct_untimed" : "feedback/correct_not_credible";
    }
    case results::Verdict::kIncorrect: return "feedback/mismatch";
    case results::Verdict::kCompileError:
      return result.refused ? "feedback/refused" : "feedback/compile_error";
    case results::Verdict::kRuntimeError:
      return result.refused ? "feedback/refused" : "feedback/runtime_error";
    case results::Verdict::kTimeout: return "feedback/hang";
    case results::Verdict::kCompiled: return "feedback/compiled";
    case results::Verdict::kInfrastructure: return "feedback/infrastructure";
  }
  return "feedback/infrastructure";
}

TemplateVars feedback_vars(const results::EvalResult& result, int turn, int max_turns) {
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
  const auto m = result.speedup();
  v["min_speedup"] = m ? fixed(*m, 2) : "-";
  std::string not_credible;
  for (const auto& s : result.sizes)
    if (s.candidate && !s.credible) not_credible += "- " + s.size + ": " + s.not_credible + "\n";
  v["not_credible"] = without_final_newlines(not_credible);
  v["world_size"] = std::to_string(result.world_size);
  std::string sizes;
  for (const auto& s : result.sizes) sizes += (sizes.empty() ? "" : ", ") + s.size;
  v["sizes"] = sizes;
  return v;
}

std::string render_feedback(const PromptLibrary& prompts, const results::EvalResult& result,
                            int turn, int max_turns) {
  TemplateVars v = feedback_vars(result, turn, max_turns);
  if (result.refused) {
    v["rule"] = result.refused_rule.empty() ? "" : rule_text(prompts, result.refused_rule);  // empty: the template says no rule names it
    v["while_running"] = result.verdict == results::Verdict::kRuntimeError ? "1" : "";
  }
  return prompts.render(feedback_template(result), v);
}

std::string verdict_summary(const results::EvalResult& result) {
  const auto m = result.speedup();
  if (m) return std::string("correct ") + fixed(*m, 2) + "x";
  if (result.verdict == results::Verdict::kCorrect)
    return result.credible() ? "correct (not timed)" : "correct (time not credible: no speedup)";
  return results::to_string(result.verdict);
}

}  // namespace mgk::agent
