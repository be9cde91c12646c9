// The GPU model and driver that key the tuning cache: a configuration's time on one GPU or
// driver says little about another. Taken from the evaluator's machine probe, the same
// source that keys calibrations.
#pragma once
#include <string>

#include "eval/machine.h"

namespace mgk::tune {

struct GpuIdentity {
  std::string model;   // "NVIDIA H200"
  std::string driver;  // the CUDA driver version, e.g. "13000"
};

// The identity of CUDA ordinal `gpu` of `machine`. Throws mgk::Error with the probe's
// reason when it found no GPU, UsageError when the ordinal is not among those it found.
GpuIdentity gpu_identity(const eval::MachineInfo& machine, int gpu);

}  // namespace mgk::tune
