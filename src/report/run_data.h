// What a report is computed from: one run and its attempts as the store holds them, read
// once. Each judged turn counts once: where a turn was evaluated twice (a process killed
// between storing the evaluation and storing the turn, then resumed), the later
// evaluation stands, so a resumed run reads like one that never stopped.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "store/store.h"

namespace mgk::report {

// A turn without its messages (what a report shows of it).
struct TurnView {
  int index = 0;
  std::string action;  // kernel, shell, submit, format_error, truncated
  std::optional<std::string> kernel_hash;
  int64_t tokens_in = 0, tokens_out = 0;
  std::optional<double> cost_usd = 0.0;  // none: unknown
  double latency_s = 0;
};

struct AttemptData {
  store::AttemptSummary summary;
  std::vector<TurnView> turns;                       // by index
  std::vector<store::EvaluationRecord> evaluations;  // one per judged turn, by turn
  std::map<std::string, std::string> sources;        // kernel hash -> source, every judged kernel
};

struct RunData {
  store::RunRecord run;
  std::vector<AttemptData> attempts;  // by problem, then sample
};

// Throws NotFoundError for an unknown run id.
RunData load_run(store::Store& store, int64_t run_id);
// Throws NotFoundError for an unknown attempt id.
AttemptData load_attempt(store::Store& store, int64_t attempt_id);

}  // namespace mgk::report
