// The tuning loop: a strategy proposes configurations, the cache answers those measured
// before, the objective measures the rest (the next ones compiled ahead while the current
// one runs), every new trial is recorded as soon as it is known, and the search stops at the
// evaluation budget, the time budget, the end of the space, or an infrastructure failure.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tune/objective.h"
#include "tune/space.h"
#include "tune/trial.h"
#include "tune/trial_cache.h"

namespace mgk::tune {

struct TuneOptions {
  SearchSpace space;            // from parse_markers(); must not be empty
  TrialContext context;         // kernel hash, problem, size, world size, machine
  std::string strategy = "auto";
  std::size_t max_evals = 100;  // trials considered, cached ones included, so a re-run with
                                // the same seed replays the same search and goes on from there
  double max_seconds = 0;       // 0: no limit; no new measurement starts after it
  std::uint64_t seed = 0;
  std::size_t prefetch = 2;     // configurations prepared ahead of the one measured
  Clock* clock = nullptr;       // null: a steady clock
  // Called after every trial, cached or measured, in order (progress lines).
  std::function<void(const Trial&, const Config&)> on_trial;
};

enum class StopReason {
  kExhausted,       // the strategy had nothing left to propose
  kMaxEvals,
  kMaxTime,
  kInfrastructure,  // a trial ended in status error; see TuneReport::message
  kInterrupted,     // Ctrl-C (common/interrupt.h); the trial in progress is not recorded
};
const char* to_string(StopReason r);

struct TunedConfig {
  Config config;
  Trial trial;
};

struct TuneReport {
  std::string strategy;          // after resolving "auto"
  std::vector<TunedConfig> trials;  // in the order considered
  std::optional<TunedConfig> best;  // the fastest ok trial; none if nothing was correct
  std::size_t measured = 0;      // trials measured in this run
  std::size_t from_cache = 0;    // trials answered by the cache
  std::size_t failed = 0;        // trials with a status other than ok
  StopReason stop = StopReason::kExhausted;
  std::string message;           // one line on why it stopped
  double seconds = 0;

  nlohmann::json to_json() const;
};

// Runs the search. Throws UsageError for an empty space or bad options; never for what a
// configuration does. Trials in the cache with status error are measured again: an
// infrastructure failure says nothing about the configuration. Ctrl-C (the interrupt flag,
// or mgk::Interrupted thrown by the objective) ends the run with kInterrupted.
TuneReport run(const TuneOptions& options, TrialCache& cache, Objective& objective);

}  // namespace mgk::tune
