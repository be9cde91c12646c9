#include "report/run_data.h"

#include <algorithm>

#include "common/error.h"

namespace mgk::report {
namespace {

AttemptData load(store::Store& store, store::AttemptSummary summary) {
  AttemptData a;
  a.summary = std::move(summary);
  for (const store::TurnRecord& t : store.turns(a.summary.id))
    a.turns.push_back({t.index, t.action, t.kernel_hash, t.tokens_in, t.tokens_out, t.cost_usd, t.latency_s});
  // Oldest first, so a later evaluation of the same turn replaces the earlier one.
  std::map<int, store::EvaluationRecord> by_turn;
  int untagged = -1;  // evaluations without a turn index keep their own slots
  for (store::EvaluationRecord& e : store.evaluations_of_attempt(a.summary.id))
    by_turn[e.turn_index.value_or(untagged--)] = std::move(e);
  for (auto& [turn, e] : by_turn) {
    if (!a.sources.count(e.kernel_hash))
      if (auto source = store.kernel_source(e.kernel_hash)) a.sources[e.kernel_hash] = *source;
    a.evaluations.push_back(std::move(e));
  }
  std::stable_sort(a.evaluations.begin(), a.evaluations.end(), [](const auto& x, const auto& y) {
    return x.turn_index.value_or(-1) < y.turn_index.value_or(-1);
  });
  return a;
}

}  // namespace

RunData load_run(store::Store& store, int64_t run_id) {
  auto run = store.run(run_id);
  if (!run)
    throw NotFoundError("no run " + std::to_string(run_id) + " in " + store.path().string() +
                     " ('mgk history' lists attempts with their runs)");
  RunData d;
  d.run = std::move(*run);
  for (store::AttemptSummary& s : store.attempts_of_run(run_id)) d.attempts.push_back(load(store, std::move(s)));
  std::sort(d.attempts.begin(), d.attempts.end(), [](const AttemptData& x, const AttemptData& y) {
    if (x.summary.problem != y.summary.problem) return x.summary.problem < y.summary.problem;
    if (x.summary.sample != y.summary.sample) return x.summary.sample < y.summary.sample;
    return x.summary.id < y.summary.id;
  });
  // A key stored twice (which no executor should do) counts once: the newer attempt.
  auto same_key = [](const AttemptData& x, const AttemptData& y) {
    return x.summary.problem == y.summary.problem && x.summary.sample == y.summary.sample;
  };
  std::vector<AttemptData> unique;
  for (auto& a : d.attempts) {
    if (!unique.empty() && same_key(unique.back(), a)) unique.back() = std::move(a);
    else unique.push_back(std::move(a));
  }
  d.attempts = std::move(unique);
  return d;
}

AttemptData load_attempt(store::Store& store, int64_t attempt_id) {
  auto summary = store.attempt(attempt_id);
  if (!summary) throw NotFoundError("no attempt " + std::to_string(attempt_id) + " in " + store.path().string());
  return load(store, std::move(*summary));
}

}  // namespace mgk::report
