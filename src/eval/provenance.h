// What an evaluation ran with, stored in its result so that a report can say it: mgk's
// version, nvcc's release, the CUDA driver and runtime, NCCL, the GPU model and how many GPUs
// the evaluation used, the architecture compiled for, and whether a calibration gave the
// roofline. (The isolation mode is in the result already.)
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "eval/machine.h"

namespace mgk::eval {

// `machine`: null under --compile-only (no GPU was asked): only mgk and nvcc are known.
nlohmann::json evaluation_provenance(const MachineInfo* machine, const std::vector<int>& gpus, const std::string& arch,
                                     bool calibrated);

// "release 13.0, V13.0.88" of `nvcc --version`'s output; "" when it has none.
std::string nvcc_release(const std::string& nvcc_version_output);

}  // namespace mgk::eval
