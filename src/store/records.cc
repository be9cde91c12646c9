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

nlohmann::json with_kernel_hash(nlohmann::json result, const std::string& kernel_hash) {
  if (!result.is_object()) return result;
  if (result.contains("kernel_hash") && !result.contains("build_key"))
    result["build_key"] = result["kernel_hash"];
  result["kernel_hash"] = kernel_hash;
  return result;
}

bool candidate_timed(const nlohmann::json& size) {
  return size.is_object() && size.contains("candidate") && !size["candidate"].is_null();
}

bool timed_below_floor(const nlohmann::json& size) { return candidate_timed(size) && !size.value("credible", true); }

EvaluationRecord EvaluationRecord::from_result(const nlohmann::json& raw_result,
                                               std::string kernel_hash) {
  if (!raw_result.is_object())
    throw Error("an evaluation result must be a JSON object (eval::EvalResult::to_json())");
  const nlohmann::json result = with_kernel_hash(raw_result, kernel_hash);
  EvaluationRecord e;
  e.kernel_hash = std::move(kernel_hash);
  e.problem = result.value("problem", "");
  e.world_size = result.value("world_size", 0);
  e.gpus = result.value("gpus", std::vector<int>{});
  e.verdict = result.value("verdict", "");
  e.message = result.value("message", "");
  e.result = result;

  std::vector<double> speedups;
  bool below_floor = false;  // a size timed under the floor has no speedup, so the kernel has none
  if (e.verdict == "correct" && result.contains("sizes") && result["sizes"].is_array())
    for (const auto& size : result["sizes"]) {
      below_floor |= timed_below_floor(size);
      double s = size.value("speedup", 0.0);
      if (s > 0) speedups.push_back(s);
    }
  if (!speedups.empty() && !below_floor) {
    std::sort(speedups.begin(), speedups.end());
    size_t n = speedups.size();
    e.speedup_min = speedups.front();
    e.speedup_max = speedups.back();
    e.speedup_median = n % 2 ? speedups[n / 2] : (speedups[n / 2 - 1] + speedups[n / 2]) / 2;
  }
  return e;
}

}  // namespace mgk::store
