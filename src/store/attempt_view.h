// The text `mgk show ATTEMPT` prints: the attempt's header, then each turn's new prompt
// messages, the reply, the evaluation (verdict, compile log, mismatch report, per-size and
// per-rank times read from the stored EvalResult JSON) and the feedback; then the best
// kernel's source.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "store/records.h"

namespace mgk::store {

// Turns are numbered from 1, as `mgk generate` counts them (the stored index + 1).
std::string render_attempt(const AttemptDetail& detail);

// `mgk show --run N`: a run's header (kind, args, status, summary) and its evaluations.
std::string render_run(const RunRecord& run, const std::vector<EvaluationRecord>& evaluations);
// A run of attempts (bench, generate): its state, then the table of its attempts (as
// `mgk history` has them) and the command that shows more (`mgk report RUN` for a bench run).
std::string render_agent_run(const RunRecord& run, const std::vector<AttemptSummary>& attempts);

// One evaluation's details from its EvalResult JSON: verdict line, phase, compile log
// (when it did not compile, or had warnings), per-size table and mismatch reports.
std::string render_evaluation(const EvaluationRecord& evaluation);

}  // namespace mgk::store
