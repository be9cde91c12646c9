#include "store/attempt_view.h"

#include <cstdio>
#include <map>
#include <set>

#include "common/format.h"
#include "results/eval_result.h"
#include "store/history_table.h"
#include "store/timestamp.h"

namespace mgk::store {
namespace {

std::string timing_median(const std::optional<results::Timing>& t) {
  return t ? fixed(t->median_us, 1) + " us" : "-";
}

std::string per_rank(const results::SizeResult& s) {
  std::string out;
  if (s.candidate)
    for (double t : s.candidate->per_rank_median_us) out += (out.empty() ? "" : " ") + fixed(t, 1);
  return out;
}

// A field as text: strings as they are, other values as JSON, missing or null as "".
std::string text_field(const nlohmann::json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || j[key].is_null()) return "";
  return j[key].is_string() ? j[key].get<std::string>() : j[key].dump();
}

std::string block(const std::string& title, const std::string& body) {
  if (body.empty()) return "";
  std::string out = "-- " + title + " --\n" + body;
  if (out.back() != '\n') out += '\n';
  return out;
}

std::string message_text(const nlohmann::json& m) {
  std::string role = text_field(m, "role");
  std::string content;
  if (m.contains("content") && m["content"].is_string())
    content = m["content"].get<std::string>();
  else if (m.contains("content"))
    content = m["content"].dump(2);  // structured content (parts) as it was sent
  return "[" + role + "]\n" + content + (content.empty() || content.back() == '\n' ? "" : "\n");
}

// Turns store either the whole request or only what it added. Print only what is new: skip
// a prefix equal to the previous turn's messages, then the previous reply and feedback when
// they are repeated as the next messages (both are printed with the previous turn).
size_t first_new_message(const TurnRecord& previous, const nlohmann::json& current) {
  if (!current.is_array()) return 0;
  size_t n = 0;
  const nlohmann::json& before = previous.messages;
  if (before.is_array() && !before.empty() && before.size() <= current.size()) {
    bool prefix = true;
    for (size_t i = 0; i < before.size() && prefix; ++i) prefix = before[i] == current[i];
    if (prefix) n = before.size();
  }
  auto repeats = [&](const char* role, const std::string& text) {
    return n < current.size() && !text.empty() && text_field(current[n], "role") == role &&
           text_field(current[n], "content") == text;
  };
  if (repeats("assistant", previous.reply)) ++n;
  if (repeats("user", previous.feedback)) ++n;
  return n;
}

}  // namespace

std::string render_evaluation(const EvaluationRecord& e) {
  const results::EvalResult& r = e.result;
  std::string out = "verdict " + e.verdict;
  if (!e.message.empty()) out += ": " + e.message;
  out += "\n";
  if (e.speedup_min)
    out += "speedup " + format_speedup(e.speedup_min) + " min, " +
           format_speedup(e.speedup_median) + " median, " + format_speedup(e.speedup_max) +
           " max over sizes\n";
  if (!r.phase.empty()) out += "phase " + r.phase + "\n";
  out += block("compile log", r.compile_log);

  if (!r.sizes.empty()) {
    out +=
        "size         correct  trials  reference     candidate     speedup  roofline    "
        "per-rank candidate medians (us)\n";
    for (const results::SizeResult& s : r.sizes) {
      char line[512];
      const std::string roof =
          s.roofline_fraction ? fixed(100 * *s.roofline_fraction, 0) + "% " + s.roofline_bound : "-";
      const auto speedup = s.credited_speedup();
      std::snprintf(line, sizeof line, "%-12s %-8s %-7d %-13s %-13s %-8s %-11s %s\n", s.size.c_str(),
                    s.correct ? "yes" : "no", s.trials_passed, timing_median(s.reference).c_str(),
                    timing_median(s.candidate).c_str(), speedup ? format_speedup(*speedup).c_str() : "-",
                    roof.c_str(), per_rank(s).c_str());
      out += line;
    }
    for (const results::SizeResult& s : r.sizes) {
      if (!s.failure.empty()) out += "failure (" + s.size + "): " + s.failure + "\n";
      if (s.mismatch) out += "first mismatch (" + s.size + "): " + results::describe(*s.mismatch) + "\n";
    }
  }
  return out;
}

std::string render_run(const RunRecord& r, const std::vector<EvaluationRecord>& evaluations) {
  std::string out = "run " + std::to_string(r.id) + ": " + r.kind +
                    (r.model.empty() ? "" : " with " + r.model) + "\n";
  out += "  status   " + std::string(to_string(r.status)) + "\n";
  out += "  started  " + short_time(r.created_at) + " UTC" +
         (r.ended_at ? ", ended " + short_time(*r.ended_at) + " UTC" : "") + " on " +
         (r.host.empty() ? "?" : r.host) + "\n";
  out += "  args     " + r.args.dump() + "\n";
  out += "  summary  " + r.summary.dump() + "\n";
  for (const auto& e : evaluations)
    out += "\n" + block("evaluation " + std::to_string(e.id) + " (kernel " +
                            e.kernel_hash.substr(0, 12) + ")",
                        render_evaluation(e));
  return out;
}

std::string render_agent_run(const RunRecord& r, const std::vector<AttemptSummary>& attempts) {
  std::string out = "run " + std::to_string(r.id) + ": " + r.kind + (r.model.empty() ? "" : " with " + r.model) + "\n";
  out += "  status   " + std::string(to_string(r.status)) + "\n";
  out += "  started  " + short_time(r.created_at) + " UTC" +
         (r.ended_at ? ", ended " + short_time(*r.ended_at) + " UTC" : "") + " on " + (r.host.empty() ? "?" : r.host) +
         "\n";
  out += "  cost     " + format_cost(r.cost_usd) + ", tokens " + std::to_string(r.tokens_in) + " in / " +
         std::to_string(r.tokens_out) + " out\n\n";
  out += render_history_table(attempts);
  const std::string id = std::to_string(r.id);
  if (r.kind == "bench")
    out += "\n'mgk report " + id + "' shows the run's pass@k, speedups, costs and failures; 'mgk show ID' one attempt\n";
  else
    out += "\n'mgk show ID' shows an attempt's turns, kernels and verdicts\n";
  return out;
}

std::string render_attempt(const AttemptDetail& d) {
  const AttemptSummary& a = d.attempt;
  std::string out = "attempt " + std::to_string(a.id) + " (run " + std::to_string(a.run_id) +
                    "): " + a.problem + " with " + a.model + ", " + a.mode + " mode\n";
  out += "  status   " + std::string(to_string(a.status)) +
         (a.exit_reason.empty() ? "" : " (" + a.exit_reason + ")") + "\n";
  out += "  started  " + short_time(a.started_at) + " UTC" +
         (a.ended_at ? ", ended " + short_time(*a.ended_at) + " UTC" : "") + "\n";
  out += "  prompts  version " + a.prompt_version + ", world size " + std::to_string(a.world_size) +
         ", sample " + std::to_string(a.sample) + "\n";
  out += "  turns    " + std::to_string(a.turns) + ", tokens " + std::to_string(a.tokens_in) +
         " in (" + std::to_string(a.tokens_cached) + " cached), " + std::to_string(a.tokens_out) +
         " out (" + std::to_string(a.tokens_reasoning) + " reasoning), cost " +
         format_cost(a.cost_usd) + "\n";
  out += "  best     " +
         (a.best_kernel_hash ? "kernel " + a.best_kernel_hash->substr(0, 12) + ", speedup " +
                                   format_speedup(a.best_speedup) + " (min over sizes)"
                             : std::string("no correct kernel")) +
         "\n";

  // An evaluation whose turn was not stored (the process died in between) still shows.
  std::set<int> stored_turns;
  for (const auto& t : d.turns) stored_turns.insert(t.index);
  std::multimap<int, const EvaluationRecord*> by_turn;
  std::vector<const EvaluationRecord*> unattached;
  for (const auto& e : d.evaluations) {
    if (e.turn_index && stored_turns.count(*e.turn_index))
      by_turn.emplace(*e.turn_index, &e);
    else
      unattached.push_back(&e);
  }

  const TurnRecord* previous = nullptr;
  for (const auto& t : d.turns) {
    out += "\n== turn " + std::to_string(t.index + 1) + ": " +
           (t.action.empty() ? "no action" : t.action) + ", finish " +
           (t.finish_reason.empty() ? "?" : t.finish_reason) + ", " + std::to_string(t.tokens_in) +
           " in / " + std::to_string(t.tokens_out) + " out, " + format_cost(t.cost_usd) + ", " +
           fixed(t.latency_s, 1) + " s ==\n";
    size_t from = previous ? first_new_message(*previous, t.messages) : 0;
    std::string prompt;
    if (t.messages.is_array())
      for (size_t i = from; i < t.messages.size(); ++i) prompt += message_text(t.messages[i]);
    out += block(from == 0 ? "prompt" : "prompt (new messages)", prompt);
    out += block("reply", t.reply);
    auto [lo, hi] = by_turn.equal_range(t.index);
    for (auto it = lo; it != hi; ++it)
      out += block("evaluation " + std::to_string(it->second->id), render_evaluation(*it->second));
    out += block("feedback", t.feedback);
    previous = &t;
  }
  for (const auto* e : unattached)
    out += "\n" + block("evaluation " + std::to_string(e->id) + " (kernel " +
                            e->kernel_hash.substr(0, 12) + ")",
                        render_evaluation(*e));

  if (a.best_kernel_hash && d.best_kernel_source)
    out += "\n== best kernel " + a.best_kernel_hash->substr(0, 12) + " ==\n" +
           *d.best_kernel_source +
           (d.best_kernel_source->empty() || d.best_kernel_source->back() == '\n' ? "" : "\n");
  return out;
}

}  // namespace mgk::store
