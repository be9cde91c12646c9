#include "store/rows.h"

#include <unistd.h>

namespace mgk::store::rows {

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "";
  return buf;
}

nlohmann::json parse_json(const std::string& text) {
  if (text.empty()) return nullptr;
  return nlohmann::json::parse(text);
}

// The best kernel of an attempt still running is the best correct one evaluated so far
// (the first correct one where none was timed, as when ranks share a GPU).
const char* const kAttemptColumns = R"sql(
  a.id, a.run_id, (SELECT r.kind FROM runs r WHERE r.id = a.run_id), a.problem, a.model, a.mode, a.prompt_version, a.sample, a.world_size,
  a.config, a.status, a.exit_reason,
  COALESCE(a.best_kernel_hash,
           (SELECT e.kernel_hash FROM evaluations e
            WHERE e.attempt_id = a.id AND e.speedup_min IS NOT NULL
            ORDER BY e.speedup_min DESC, e.id LIMIT 1),
           (SELECT e.kernel_hash FROM evaluations e
            WHERE e.attempt_id = a.id AND e.verdict = 'correct' ORDER BY e.id LIMIT 1)),
  (SELECT MAX(e.speedup_min) FROM evaluations e WHERE e.attempt_id = a.id),
  a.started_at, a.ended_at,
  (SELECT COUNT(*) FROM turns t WHERE t.attempt_id = a.id),
  a.tokens_in, a.tokens_out, a.tokens_cached, a.tokens_reasoning, a.cost_usd)sql";

AttemptSummary read_attempt(const Statement& s) {
  AttemptSummary a;
  int c = 0;
  a.id = s.int64(c++);
  a.run_id = s.int64(c++);
  a.run_kind = s.text(c++);
  a.problem = s.text(c++);
  a.model = s.text(c++);
  a.mode = s.text(c++);
  a.prompt_version = s.text(c++);
  a.sample = int(s.int64(c++));
  a.world_size = int(s.int64(c++));
  a.config = parse_json(s.text(c++));
  a.status = status_from_string(s.text(c++));
  a.exit_reason = s.text(c++);
  a.best_kernel_hash = s.optional_text(c++);
  a.best_speedup = s.optional_real(c++);
  a.started_at = s.text(c++);
  a.ended_at = s.optional_text(c++);
  a.turns = int(s.int64(c++));
  a.tokens_in = s.int64(c++);
  a.tokens_out = s.int64(c++);
  a.tokens_cached = s.int64(c++);
  a.tokens_reasoning = s.int64(c++);
  a.cost_usd = s.optional_real(c++);
  return a;
}

const char* const kRunColumns = R"sql(
  r.id, r.uuid, r.kind, r.model, r.args, r.status, r.host, r.pid, r.created_at, r.ended_at,
  r.summary, r.tokens_in, r.tokens_out, r.tokens_cached, r.tokens_reasoning, r.cost_usd,
  (SELECT MAX(e.speedup_min) FROM evaluations e WHERE e.run_id = r.id))sql";

RunRecord read_run(const Statement& s) {
  RunRecord r;
  r.id = s.int64(0);
  r.uuid = s.text(1);
  r.kind = s.text(2);
  r.model = s.text(3);
  r.args = parse_json(s.text(4));
  r.status = status_from_string(s.text(5));
  r.host = s.text(6);
  r.pid = s.optional_int64(7);
  r.created_at = s.text(8);
  r.ended_at = s.optional_text(9);
  r.summary = parse_json(s.text(10));
  r.tokens_in = s.int64(11);
  r.tokens_out = s.int64(12);
  r.tokens_cached = s.int64(13);
  r.tokens_reasoning = s.int64(14);
  r.cost_usd = s.optional_real(15);
  r.best_speedup = s.optional_real(16);
  return r;
}

const char* const kTurnColumns = R"sql(
  attempt_id, turn_index, messages, reply, tokens_in, tokens_out, tokens_cached,
  tokens_reasoning, cost_usd, latency_s, finish_reason, action, kernel_hash, feedback,
  created_at)sql";

TurnRecord read_turn(const Statement& s) {
  TurnRecord t;
  t.attempt_id = s.int64(0);
  t.index = int(s.int64(1));
  t.messages = parse_json(s.text(2));
  t.reply = s.text(3);
  t.tokens_in = s.int64(4);
  t.tokens_out = s.int64(5);
  t.tokens_cached = s.int64(6);
  t.tokens_reasoning = s.int64(7);
  t.cost_usd = s.optional_real(8);
  t.latency_s = s.real(9);
  t.finish_reason = s.text(10);
  t.action = s.text(11);
  t.kernel_hash = s.optional_text(12);
  t.feedback = s.text(13);
  t.created_at = s.text(14);
  return t;
}

const char* const kEvaluationColumns = R"sql(
  id, run_id, attempt_id, turn_index, kernel_hash, problem, world_size, gpus, verdict,
  message, speedup_min, speedup_median, speedup_max, result, created_at)sql";

EvaluationRecord read_evaluation(const Statement& s) {
  EvaluationRecord e;
  e.id = s.int64(0);
  e.run_id = s.optional_int64(1);
  e.attempt_id = s.optional_int64(2);
  if (auto t = s.optional_int64(3)) e.turn_index = int(*t);
  e.kernel_hash = s.text(4);
  e.problem = s.text(5);
  e.world_size = int(s.int64(6));
  e.gpus = parse_json(s.text(7)).get<std::vector<int>>();
  e.verdict = s.text(8);
  e.message = s.text(9);
  e.speedup_min = s.optional_real(10);
  e.speedup_median = s.optional_real(11);
  e.speedup_max = s.optional_real(12);
  e.result = results::EvalResult::from_json(parse_json(s.text(13)));
  e.created_at = s.text(14);
  return e;
}

const char* const kTuningColumns = R"sql(
  kernel_hash, problem, size, world_size, gpu_model, driver, params, status, time_us,
  message)sql";

TuningTrial read_tuning_trial(const Statement& s) {
  TuningTrial t;
  t.kernel_hash = s.text(0);
  t.problem = s.text(1);
  t.size = s.text(2);
  t.world_size = int(s.int64(3));
  t.gpu_model = s.text(4);
  t.driver = s.text(5);
  t.params = parse_json(s.text(6));
  t.status = s.text(7);
  t.time_us = s.optional_real(8).value_or(0);
  t.message = s.text(9);
  return t;
}

}  // namespace mgk::store::rows
