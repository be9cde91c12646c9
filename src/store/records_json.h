// The store's records as JSON (for --json output), through nlohmann's to_json hooks:
// `nlohmann::json j = summary;`. Optional fields that are unset become null.
#pragma once
#include <nlohmann/json.hpp>

#include "store/records.h"

namespace mgk::store {

void to_json(nlohmann::json& j, const RunRecord& r);
void to_json(nlohmann::json& j, const AttemptSummary& a);
void to_json(nlohmann::json& j, const TurnRecord& t);
void to_json(nlohmann::json& j, const EvaluationRecord& e);
// {"attempt", "turns", "evaluations", "best_kernel": {"hash", "source"} or null}
void to_json(nlohmann::json& j, const AttemptDetail& d);

}  // namespace mgk::store
