// One tuning trial: a configuration of one kernel measured on one problem, size, world size
// and machine, with what happened. Trials are the unit the cache stores and resumes from.
#pragma once
#include <limits>
#include <string>

#include <nlohmann/json.hpp>

namespace mgk::tune {

enum class TrialStatus {
  kOk,         // correct at every size checked, and timed
  kCompile,    // nvcc rejected the configuration
  kLaunch,     // launch resources exceeded, a CUDA error, a crashed rank
  kIncorrect,  // ran but the outputs (or the inputs) were wrong
  kHang,       // the watchdog killed it
  kError,      // infrastructure: says nothing about the configuration
};
const char* to_string(TrialStatus s);
TrialStatus trial_status_from_string(const std::string& s);  // UsageError on unknown names

// Everything a measurement depends on besides the configuration. Two trials with equal
// context and params are the same measurement.
struct TrialContext {
  std::string kernel_hash;  // of the kernel source as given, without the tuner's defines
  std::string problem;      // "collectives/all_reduce"
  std::string size;         // size preset whose time is the objective, or a list of them
                            // ("small,large": the geometric mean, eval_objective.h)
  int world_size = 0;
  std::string gpu_model;    // "NVIDIA H200"
  std::string driver;       // "580.65.06"

  bool operator==(const TrialContext&) const = default;
};

struct TrialKey {
  TrialContext context;
  std::string params;  // canonical JSON of the configuration (SearchSpace::canonical)

  bool operator==(const TrialKey&) const = default;
};

struct Trial {
  TrialKey key;
  TrialStatus status = TrialStatus::kError;
  double time_us = 0;           // candidate median at the context's size (the geometric
                                // mean over a list of sizes); ok trials only
  std::string message;          // one line: why it failed, or a note
  double compile_seconds = 0;   // not persisted by every cache
  double eval_seconds = 0;
  bool from_cache = false;      // found in the cache rather than measured in this run

  // What the search minimises: the time for ok trials, +infinity for every failure, so a
  // fast wrong configuration can never win.
  double score() const {
    return status == TrialStatus::kOk ? time_us : std::numeric_limits<double>::infinity();
  }

  nlohmann::json to_json() const;
};

}  // namespace mgk::tune
