// `mgk generate --tune`: the session's best kernel tuned over its declared parameters.
#pragma once
#include "agent/agent.h"
#include "eval/evaluate.h"
#include "generate/output.h"
#include "store/store.h"

namespace mgk::generate {

// Tunes the best kernel; false when Ctrl-C stopped the tuning.
bool tune_best(const agent::AttemptOutcome& o, const eval::EvalOptions& eval_options, store::Store& store,
               const Printer& print);

}  // namespace mgk::generate
