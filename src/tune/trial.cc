#include "tune/trial.h"

#include "common/error.h"

namespace mgk::tune {
namespace {
struct StatusName {
  TrialStatus status;
  const char* name;
};
constexpr StatusName kStatusNames[] = {
    {TrialStatus::kOk, "ok"},           {TrialStatus::kCompile, "compile"},
    {TrialStatus::kLaunch, "launch"},   {TrialStatus::kIncorrect, "incorrect"},
    {TrialStatus::kHang, "hang"},       {TrialStatus::kError, "error"},
};
}  // namespace

const char* to_string(TrialStatus s) {
  for (const auto& n : kStatusNames)
    if (n.status == s) return n.name;
  return "error";
}

TrialStatus trial_status_from_string(const std::string& s) {
  for (const auto& n : kStatusNames)
    if (s == n.name) return n.status;
  throw UsageError("unknown tuning trial status '" + s +
                   "'; expected ok, compile, launch, incorrect, hang or error");
}

nlohmann::json Trial::to_json() const {
  nlohmann::json j = {
      {"kernel_hash", key.context.kernel_hash},
      {"problem", key.context.problem},
      {"size", key.context.size},
      {"world_size", key.context.world_size},
      {"gpu_model", key.context.gpu_model},
      {"driver", key.context.driver},
      {"params", nlohmann::json::parse(key.params)},
      {"status", to_string(status)},
      {"message", message},
      {"from_cache", from_cache},
  };
  if (status == TrialStatus::kOk) j["time_us"] = time_us;
  if (!from_cache) {
    j["compile_seconds"] = compile_seconds;
    j["eval_seconds"] = eval_seconds;
  }
  return j;
}

}  // namespace mgk::tune
