#include "store/records.h"

#include <algorithm>

#include "common/error.h"
#include "store/tuning_trial.h"

namespace mgk::store {

const char* to_string(Status s) {
  switch (s) {
    case Status::kRunning:
      return "running";
    case Status::kDone:
      return "done";
    case Status::kInterrupted:
      return "interrupted";
    case Status::kFailed:
      return "failed";
  }
  return "running";
}

Status status_from_string(const std::string& s) {
  for (Status v : {Status::kRunning, Status::kDone, Status::kInterrupted, Status::kFailed})
    if (s == to_string(v)) return v;
  throw UsageError("unknown status '" + s + "' (valid: running, done, interrupted, failed)");
}

void check_run_kind(const std::string& kind) {
  for (const char* valid : {"generate", "bench", "tune", "eval"})
    if (kind == valid) return;
  throw UsageError("unknown run kind '" + kind + "' (valid: generate, bench, tune, eval)");
}

bool is_tuning_status(const std::string& status) {
  for (const char* valid : {"ok", "compile", "launch", "incorrect", "hang", "error"})
    if (status == valid) return true;
  return false;
}

EvaluationRecord EvaluationRecord::from_result(results::EvalResult result, std::string kernel_hash) {
  EvaluationRecord e;
  result.kernel_hash = kernel_hash;
  e.kernel_hash = std::move(kernel_hash);
  e.problem = result.problem;
  e.world_size = result.world_size;
  e.gpus = result.gpus;
  e.verdict = results::to_string(result.verdict);
  e.message = result.message;
  std::vector<double> speedups = result.speedups();
  if (!speedups.empty()) {
    std::sort(speedups.begin(), speedups.end());
    const size_t n = speedups.size();
    e.speedup_min = speedups.front();
    e.speedup_max = speedups.back();
    e.speedup_median = n % 2 ? speedups[n / 2] : (speedups[n / 2 - 1] + speedups[n / 2]) / 2;
  }
  e.result = std::move(result);
  return e;
}

EvaluationRecord EvaluationRecord::from_result(const nlohmann::json& result, std::string kernel_hash) {
  if (!result.is_object())
    throw Error("an evaluation result must be a JSON object (results::EvalResult::to_json())");
  return from_result(results::EvalResult::from_json(result), std::move(kernel_hash));
}

}  // namespace mgk::store
