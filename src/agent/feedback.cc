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

// One of prompts/feedback/pieces/ rendered, without its final newline: the pieces are the
// lines and cells the feedback templates are filled with, so that every word the model reads
// is in prompts/.
std::string piece(const PromptLibrary& prompts, const std::string& name, const TemplateVars& vars) {
  return without_final_newlines(prompts.render("feedback/pieces/" + name, vars));
}

// Joins the non-empty parts with `sep`.
std::string joined(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (const auto& p : parts)
    if (!p.empty()) out += (out.empty() ? "" : sep) + p;
  return out;
}

std::string median_us(const std::optional<results::Timing>& t) { return t ? fixed(t->median_us, 1) : "-"; }

std::string size_table(const PromptLibrary& prompts, const results::EvalResult& r) {
  std::vector<std::string> rows;
  for (const auto& s : r.sizes) {
    const auto speedup = s.credited_speedup();
    rows.push_back(piece(prompts, "size_row",
                         {{"size", s.size},
                          {"reference_us", median_us(s.reference)},
                          {"yours_us", median_us(s.candidate)},
                          {"speedup", speedup ? fixed(*speedup, 2) : ""},
                          {"timed", s.candidate ? "1" : ""},
                          {"roofline_us", s.roofline_us > 0 ? fixed(s.roofline_us, 1) : "-"},
                          {"fraction", s.roofline_fraction ? fixed(*s.roofline_fraction, 2) : "-"},
                          {"bound", s.roofline_bound.empty() ? "-" : s.roofline_bound},
                          {"floor_us", median_us(s.floor)}}));
  }
  return piece(prompts, "size_table", {{"rows", joined(rows, "\n")}});
}

std::string per_rank_times(const PromptLibrary& prompts, const results::EvalResult& r) {
  std::vector<std::string> lines;
  for (const auto& s : r.sizes) {
    if (!s.candidate || s.candidate->per_rank_median_us.empty()) continue;
    std::vector<std::string> times;
    const auto& v = s.candidate->per_rank_median_us;
    for (size_t rank = 0; rank < v.size(); ++rank)
      times.push_back(piece(prompts, "rank_time", {{"rank", std::to_string(rank)}, {"us", fixed(v[rank], 1)}}));
    lines.push_back(piece(prompts, "rank_times", {{"size", s.size}, {"times", joined(times, ", ")}}));
  }
  return joined(lines, "\n");
}

std::string mismatch_report(const PromptLibrary& prompts, const results::EvalResult& r) {
  std::vector<std::string> lines;
  auto report = [&](const std::vector<results::SizeResult>& sizes, const std::string& where) {
    for (const auto& s : sizes)
      lines.push_back(piece(prompts, "size_verdict",
                            {{"where", where},
                             {"size", s.size},
                             {"correct", s.correct ? "1" : ""},
                             {"failure", s.failure},
                             {"trials_passed", std::to_string(s.trials_passed)},
                             {"first_wrong", s.mismatch ? results::describe(*s.mismatch) : ""}}));
  };
  auto where = [&](int world, bool shared) {
    return piece(prompts, "where", {{"world", std::to_string(world)}, {"shared", shared ? "1" : ""}});
  };
  report(r.sizes, r.structure_checks.empty() ? "" : where(r.world_size, false));
  for (const auto& c : r.structure_checks) report(c.sizes, where(c.world, true));
  return joined(lines, "\n");
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

TemplateVars feedback_vars(const PromptLibrary& prompts, const results::EvalResult& result, int turn,
                           int max_turns) {
  TemplateVars v;
  v["turn"] = std::to_string(turn);
  v["max_turns"] = std::to_string(max_turns);
  v["message"] = result.message;
  v["phase"] = result.phase;
  v["compile_log"] = without_final_newlines(cut_middle(result.compile_log, 8000, 4000));
  // The runtime log of a failing rank, when the evaluator kept one, is in the message; the
  // size entries' failure lines say which preset failed.
  std::vector<std::string> log;
  for (const auto& s : result.sizes)
    if (!s.failure.empty()) log.push_back(piece(prompts, "size_failure", {{"size", s.size}, {"failure", s.failure}}));
  v["log"] = joined(log, "\n");
  v["report"] = mismatch_report(prompts, result);
  v["size_table"] = size_table(prompts, result);
  v["per_rank"] = per_rank_times(prompts, result);
  const auto m = result.speedup();
  v["min_speedup"] = m ? fixed(*m, 2) : "-";
  std::vector<std::string> not_credible;
  for (const auto& s : result.sizes)
    if (s.candidate && !s.credible)
      not_credible.push_back(piece(prompts, "not_credible", {{"size", s.size}, {"why", s.not_credible}}));
  v["not_credible"] = joined(not_credible, "\n");
  v["world_size"] = std::to_string(result.world_size);
  std::string sizes;
  for (const auto& s : result.sizes) sizes += (sizes.empty() ? "" : ", ") + s.size;
  v["sizes"] = sizes;
  return v;
}

std::string render_feedback(const PromptLibrary& prompts, const results::EvalResult& result,
                            int turn, int max_turns) {
  TemplateVars v = feedback_vars(prompts, result, turn, max_turns);
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
