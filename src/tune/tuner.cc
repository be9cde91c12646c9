#include "tune/tuner.h"

#include <chrono>
#include <cstdio>

#include "common/error.h"
#include "common/interrupt.h"
#include "tune/prefetch.h"
#include "tune/strategy.h"

namespace mgk::tune {

double SteadyClock::now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

const char* to_string(StopReason r) {
  switch (r) {
    case StopReason::kExhausted: return "exhausted";
    case StopReason::kMaxEvals: return "max_evals";
    case StopReason::kMaxTime: return "max_time";
    case StopReason::kInfrastructure: return "infrastructure";
    case StopReason::kInterrupted: return "interrupted";
  }
  return "unknown";
}

namespace {

constexpr const char* kInterruptedMessage =
    "interrupted; every finished trial is recorded and a re-run resumes from them";

Trial make_trial(const TrialKey& key, const Measurement& m) {
  Trial t;
  t.key = key;
  t.status = m.status;
  t.time_us = m.status == TrialStatus::kOk ? m.time_us : 0;
  t.message = m.message;
  t.compile_seconds = m.compile_seconds;
  t.eval_seconds = m.eval_seconds;
  return t;
}

class Loop {
 public:
  Loop(const TuneOptions& options, TrialCache& cache, Objective& objective, Clock& clock)
      : options_(options), space_(options.space), cache_(cache), objective_(objective),
        clock_(clock), start_(clock.now_seconds()) {}

  TuneReport run() {
    report_.strategy = resolve_strategy_name(options_.strategy, space_, options_.max_evals);
    auto strategy = make_strategy(options_.strategy, space_, options_.seed, options_.max_evals);
    while (!stopped_) {
      if (report_.trials.size() >= options_.max_evals) {
        stop(StopReason::kMaxEvals, "reached the budget of " +
                                        std::to_string(options_.max_evals) + " evaluations");
        break;
      }
      if (time_is_up()) break;
      std::vector<Config> batch = strategy->propose(options_.max_evals - report_.trials.size());
      if (batch.empty()) {
        stop(StopReason::kExhausted, "no configuration left to try after " +
                                         std::to_string(report_.trials.size()) + " trials");
        break;
      }
      run_batch(*strategy, batch);
    }
    report_.seconds = clock_.now_seconds() - start_;
    return std::move(report_);
  }

 private:
  void run_batch(SearchStrategy& strategy, const std::vector<Config>& batch) {
    std::vector<TrialKey> keys;
    std::vector<std::optional<Trial>> cached;
    std::vector<Config> to_measure;
    for (const Config& c : batch) {
      keys.push_back(TrialKey{options_.context, space_.canonical(c)});
      std::optional<Trial> hit = cache_.find(keys.back());
      if (hit && hit->status == TrialStatus::kError) hit.reset();  // not the config's fault
      if (!hit) to_measure.push_back(c);
      cached.push_back(std::move(hit));
    }
    Prefetcher prefetch(to_measure, [this](const Config& c) { objective_.prepare(c); },
                        options_.prefetch);
    std::size_t next_to_measure = 0;
    for (std::size_t i = 0; i < batch.size(); ++i) {
      Trial trial;
      if (cached[i]) {
        trial = std::move(*cached[i]);
        trial.from_cache = true;
        ++report_.from_cache;
      } else {
        if (time_is_up() || was_interrupted()) return;
        prefetch.wait_for(next_to_measure++);
        Measurement measured;
        try {
          measured = objective_.measure(batch[i]);
        } catch (const Interrupted&) {
          stop(StopReason::kInterrupted, kInterruptedMessage);
          return;
        }
        trial = make_trial(keys[i], measured);
        cache_.record(trial);  // before anything else can fail: a crash loses nothing
        ++report_.measured;
      }
      strategy.observe(batch[i], trial.score());
      add(batch[i], std::move(trial));
      if (stopped_) return;
    }
  }

  void add(const Config& config, Trial trial) {
    if (trial.status != TrialStatus::kOk) ++report_.failed;
    report_.trials.push_back(TunedConfig{config, std::move(trial)});
    const TunedConfig& added = report_.trials.back();
    if (added.trial.status == TrialStatus::kOk &&
        (!report_.best || added.trial.time_us < report_.best->trial.time_us))
      report_.best = added;
    if (options_.on_trial) options_.on_trial(added.trial, added.config);
    if (added.trial.status == TrialStatus::kError)
      stop(StopReason::kInfrastructure,
           "the evaluation infrastructure failed on " + space_.describe(config) + ": " +
               added.trial.message + " (recorded as 'error'; a re-run measures it again)");
  }

  bool was_interrupted() {
    if (!interrupted()) return false;
    stop(StopReason::kInterrupted, kInterruptedMessage);
    return true;
  }

  bool time_is_up() {
    if (options_.max_seconds <= 0 || clock_.now_seconds() - start_ < options_.max_seconds)
      return false;
    char buf[64];
    std::snprintf(buf, sizeof buf, "%g", options_.max_seconds);
    stop(StopReason::kMaxTime, std::string("reached the time budget of ") + buf + " s after " +
                                   std::to_string(report_.trials.size()) + " trials");
    return true;
  }

  void stop(StopReason reason, std::string message) {
    stopped_ = true;
    report_.stop = reason;
    report_.message = std::move(message);
  }

  const TuneOptions& options_;
  const SearchSpace& space_;
  TrialCache& cache_;
  Objective& objective_;
  Clock& clock_;
  const double start_;
  TuneReport report_;
  bool stopped_ = false;
};

}  // namespace

TuneReport run(const TuneOptions& options, TrialCache& cache, Objective& objective) {
  if (options.space.empty())
    throw UsageError("the kernel declares no tunable parameters; add markers such as "
                     "'// mgk:tune BLOCKS 8 16 32' (see src/tune/README.md)");
  if (options.max_evals == 0) throw UsageError("the evaluation budget must be at least 1");
  SteadyClock steady;
  Loop loop(options, cache, objective, options.clock ? *options.clock : steady);
  return loop.run();
}

nlohmann::json TuneReport::to_json() const {
  nlohmann::json j = {
      {"strategy", strategy},   {"stop", to_string(stop)},   {"message", message},
      {"measured", measured},   {"from_cache", from_cache}, {"failed", failed},
      {"seconds", seconds},
  };
  j["best"] = best ? best->trial.to_json() : nlohmann::json(nullptr);
  j["trials"] = nlohmann::json::array();
  for (const auto& t : trials) j["trials"].push_back(t.trial.to_json());
  return j;
}

}  // namespace mgk::tune
