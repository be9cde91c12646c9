// Internal to the store: the column lists its queries select and the functions that read
// a selected row into a record, shared by the files that implement Store.
#pragma once
#include <string>

#include "store/records.h"
#include "store/statement.h"
#include "store/tuning_trial.h"

namespace mgk::store::rows {

// SELECT kAttemptColumns FROM attempts a ... ; read with read_attempt.
extern const char* const kAttemptColumns;
AttemptSummary read_attempt(const Statement& s);

extern const char* const kRunColumns;  // FROM runs r
RunRecord read_run(const Statement& s);

extern const char* const kTurnColumns;  // FROM turns
TurnRecord read_turn(const Statement& s);

extern const char* const kEvaluationColumns;  // FROM evaluations
EvaluationRecord read_evaluation(const Statement& s);

extern const char* const kTuningColumns;  // FROM tuning_trials
TuningTrial read_tuning_trial(const Statement& s);

// This machine's name, as runs record it ("" when it cannot be read).
std::string host_name();

// A JSON column's text parsed; an empty text reads as null.
nlohmann::json parse_json(const std::string& text);

}  // namespace mgk::store::rows
