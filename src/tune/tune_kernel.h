// Tuning one kernel file end to end, as `mgk tune` and `mgk generate --tune` do it: parse its
// markers, key the cache (kernel hash, problem, size, world size, GPU model, driver),
// search with the evaluator as the objective, and write the winner as a kernel file.
#pragma once
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "eval/evaluate.h"
#include "eval/machine.h"
#include "tune/trial_cache.h"
#include "tune/tuner.h"

namespace mgk::tune {

// The GPU model and driver that key the tuning cache: a configuration's time on one GPU or
// driver says little about another. Taken from the evaluator's machine probe, the same
// source that keys calibrations.
struct GpuIdentity {
  std::string model;   // "NVIDIA H200"
  std::string driver;  // the CUDA driver version, e.g. "13000"
};

// The identity of CUDA ordinal `gpu` of `machine`. Throws mgk::Error with the probe's
// reason when it found no GPU, UsageError when the ordinal is not among those it found.
GpuIdentity gpu_identity(const eval::MachineInfo& machine, int gpu);

struct KernelTuneRequest {
  // Problem, kernel, world size, GPUs, nvcc flags, timeouts; sizes checked for correctness
  // (empty: the problem's defaults). Defines are the tuner's.
  eval::EvalOptions eval;
  std::string size;               // preset whose time is minimised, or several ("small,large":
                                  // their geometric mean, see eval_objective.h); empty:
                                  // "medium" if the problem has it, else its last default
  std::string strategy = "auto";
  std::size_t max_evals = 100;
  double max_seconds = 0;         // 0: no limit
  std::uint64_t seed = 0;
  std::optional<std::filesystem::path> out;  // best kernel; default: KERNEL.tuned.cu beside it
  std::string gpu_model, driver;  // empty: probed, for the group's first GPU
  std::function<void(const Trial&, const Config&)> on_trial;
};

struct KernelTuneResult {
  SearchSpace space;
  TrialContext context;
  TuneReport report;
  std::optional<std::filesystem::path> best_kernel;  // written when a configuration was ok
};

// Throws UsageError for an unreadable kernel, bad markers, no markers, an unknown problem
// or size; mgk::Error when the GPU cannot be identified or the best kernel not written.
KernelTuneResult tune_kernel(const KernelTuneRequest& request, TrialCache& cache);

// A kernel file's source, its hash (the cache key part, sha256 of the file as given) and
// its parsed markers; runs nothing (for --show). UsageError if unreadable or bad markers.
struct KernelIdentity {
  std::string source;
  std::string kernel_hash;
  SearchSpace space;
};
KernelIdentity identify_kernel(const std::filesystem::path& kernel);

// The size preset tuning uses when none is asked for.
std::string default_tuning_size(const problems::Spec& spec);

// Where the best kernel goes when no --out is given: "dir/name.cu" -> "dir/name.tuned.cu".
std::filesystem::path default_best_path(const std::filesystem::path& kernel);

}  // namespace mgk::tune
