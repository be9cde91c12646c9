#include "store/records_json.h"

namespace mgk::store {
namespace {

template <typename T>
nlohmann::json or_null(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

}  // namespace

void to_json(nlohmann::json& j, const RunRecord& r) {
  j = {{"id", r.id},
       {"uuid", r.uuid},
       {"kind", r.kind},
       {"model", r.model},
       {"args", r.args},
       {"status", to_string(r.status)},
       {"host", r.host},
       {"pid", or_null(r.pid)},
       {"created_at", r.created_at},
       {"ended_at", or_null(r.ended_at)},
       {"summary", r.summary},
       {"tokens_in", r.tokens_in},
       {"tokens_out", r.tokens_out},
       {"tokens_cached", r.tokens_cached},
       {"tokens_reasoning", r.tokens_reasoning},
       {"cost_usd", or_null(r.cost_usd)},
       {"best_speedup", or_null(r.best_speedup)}};
}

void to_json(nlohmann::json& j, const AttemptSummary& a) {
  j = {{"id", a.id},
       {"run_id", a.run_id},
       {"kind", a.run_kind},
       {"problem", a.problem},
       {"model", a.model},
       {"mode", a.mode},
       {"prompt_version", a.prompt_version},
       {"sample", a.sample},
       {"world_size", a.world_size},
       {"config", a.config},
       {"status", to_string(a.status)},
       {"exit_reason", a.exit_reason},
       {"best_kernel_hash", or_null(a.best_kernel_hash)},
       {"best_speedup", or_null(a.best_speedup)},
       {"started_at", a.started_at},
       {"ended_at", or_null(a.ended_at)},
       {"turns", a.turns},
       {"tokens_in", a.tokens_in},
       {"tokens_out", a.tokens_out},
       {"tokens_cached", a.tokens_cached},
       {"tokens_reasoning", a.tokens_reasoning},
       {"cost_usd", or_null(a.cost_usd)}};
}

void to_json(nlohmann::json& j, const TurnRecord& t) {
  j = {{"attempt_id", t.attempt_id},
       {"index", t.index},
       {"messages", t.messages},
       {"reply", t.reply},
       {"tokens_in", t.tokens_in},
       {"tokens_out", t.tokens_out},
       {"tokens_cached", t.tokens_cached},
       {"tokens_reasoning", t.tokens_reasoning},
       {"cost_usd", or_null(t.cost_usd)},
       {"latency_s", t.latency_s},
       {"finish_reason", t.finish_reason},
       {"action", t.action},
       {"kernel_hash", or_null(t.kernel_hash)},
       {"feedback", t.feedback},
       {"created_at", t.created_at}};
}

void to_json(nlohmann::json& j, const EvaluationRecord& e) {
  j = {{"id", e.id},
       {"run_id", or_null(e.run_id)},
       {"attempt_id", or_null(e.attempt_id)},
       {"turn_index", or_null(e.turn_index)},
       {"kernel_hash", e.kernel_hash},
       {"problem", e.problem},
       {"world_size", e.world_size},
       {"gpus", e.gpus},
       {"verdict", e.verdict},
       {"message", e.message},
       {"speedup_min", or_null(e.speedup_min)},
       {"speedup_median", or_null(e.speedup_median)},
       {"speedup_max", or_null(e.speedup_max)},
       {"result", e.result.to_json()},
       {"created_at", e.created_at}};
}

void to_json(nlohmann::json& j, const AttemptDetail& d) {
  j = {{"attempt", d.attempt}, {"turns", d.turns}, {"evaluations", d.evaluations}};
  if (d.attempt.best_kernel_hash && d.best_kernel_source)
    j["best_kernel"] = {{"hash", *d.attempt.best_kernel_hash}, {"source", *d.best_kernel_source}};
  else
    j["best_kernel"] = nullptr;
}

}  // namespace mgk::store
