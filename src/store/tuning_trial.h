// One measured configuration of a tunable kernel: the autotuner's cache entry. The key is
// everything that can change the measurement; the rest is the outcome.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

namespace mgk::store {

// What identifies a trial. `params` is compared in canonical form (canonical_params).
struct TuningKey {
  std::string kernel_hash;  // of the kernel source without the tuner's defines
  std::string problem;      // e.g. "collectives/all_reduce"
  std::string size;         // size preset name
  int world_size = 0;
  std::string gpu_model;  // e.g. "NVIDIA H200"
  std::string driver;     // driver version, e.g. "580.65.06"
  nlohmann::json params;  // {"BLOCKS": 16, "CHUNK_KB": 256}
};

struct TuningTrial {
  std::string kernel_hash, problem, size;
  int world_size = 0;
  std::string gpu_model, driver;
  nlohmann::json params;
  std::string status;  // ok | compile | launch | incorrect | hang | error
  double time_us = 0;  // candidate median time; meaningful when status == "ok"
  std::string message;

  TuningKey key() const {
    return {kernel_hash, problem, size, world_size, gpu_model, driver, params};
  }
};

// The text a params object is stored and compared as: keys sorted, no whitespace. Note
// that 64 and 64.0 are different values here; the tuner should emit one form per parameter.
inline std::string canonical_params(const nlohmann::json& params) {
  return params.dump();
}

// True for the statuses a trial may have (listed above).
bool is_tuning_status(const std::string& status);

}  // namespace mgk::store
