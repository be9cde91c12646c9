#include "tune/tuner.h"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <condition_variable>
#include <limits>
#include <mutex>
#include <set>

#include "common/error.h"
#include "common/interrupt.h"
#include "synthetic.h"
#include "tune/markers.h"

namespace mgk::tune {
namespace {

using test::FakeClock;
using test::FunctionObjective;
using test::Landscape;

TrialContext context() {
  return TrialContext{"0123abcd", "collectives/all_reduce", "medium", 8, "NVIDIA H200", "580.65"};
}

TuneOptions landscape_options(const std::string& strategy, std::size_t max_evals,
                              std::uint64_t seed = 5) {
  TuneOptions o;
  o.space = test::landscape_space();
  o.context = context();
  o.strategy = strategy;
  o.max_evals = max_evals;
  o.seed = seed;
  return o;
}

std::vector<Config> configs_of(const TuneReport& r) {
  std::vector<Config> out;
  for (const auto& t : r.trials) out.push_back(t.config);
  return out;
}

TEST(Tuner, SpendsTheBudgetAndReportsTheFastestCorrectTrial) {
  InMemoryTrialCache cache;
  FunctionObjective objective(Landscape::measure);
  TuneReport r = run(landscape_options("evolutionary", 120), cache, objective);
  EXPECT_EQ(r.strategy, "evolutionary");
  EXPECT_EQ(r.stop, StopReason::kMaxEvals);
  EXPECT_EQ(r.trials.size(), 120u);
  EXPECT_EQ(r.measured, 120u);
  EXPECT_EQ(r.from_cache, 0u);
  EXPECT_EQ(objective.measured.size(), 120u);
  EXPECT_EQ(cache.size(), 120u);
  ASSERT_TRUE(r.best);
  double fastest = std::numeric_limits<double>::infinity();
  std::size_t failed = 0;
  for (const auto& t : r.trials) {
    if (t.trial.status == TrialStatus::kOk) fastest = std::min(fastest, t.trial.time_us);
    else ++failed;
  }
  EXPECT_EQ(r.best->trial.time_us, fastest);
  EXPECT_EQ(r.best->trial.status, TrialStatus::kOk);
  EXPECT_EQ(r.failed, failed);
  // The best trial is the best configuration's: its key names that configuration and its
  // time is what the landscape gives there.
  EXPECT_EQ(r.best->trial.key.params, test::landscape_space().canonical(r.best->config));
  EXPECT_DOUBLE_EQ(r.best->trial.time_us, Landscape::measure(r.best->config).time_us);
  EXPECT_EQ(r.best->trial.key.context, context());
}

TEST(Tuner, FailuresAreRecordedNotFatalAndAFastWrongConfigurationNeverWins) {
  // Values chosen to hit every region of the landscape: launch failures (A + B > 18),
  // compile failures (C == 11) and the fast wrong corner (A == 0 and D == 0).
  TuneOptions o;
  o.space = parse_markers(
      "// mgk:tune A 0 1 9\n"
      "// mgk:tune B 3 10\n"
      "// mgk:tune C 7 11\n"
      "// mgk:tune D 0 5\n");
  o.context = context();
  o.strategy = "exhaustive";
  o.max_evals = 1000;
  // The synthetic landscape works on value indices; map this space's values onto them.
  FunctionObjective objective([&](const Config& c) {
    Config landscape_config(4);
    for (int k = 0; k < 4; ++k)
      landscape_config[k] = std::uint32_t(*o.space.parameters()[k].values[c[k]].number);
    return Landscape::measure(landscape_config);
  });
  InMemoryTrialCache cache;
  TuneReport r = run(o, cache, objective);
  EXPECT_EQ(r.stop, StopReason::kExhausted);
  EXPECT_EQ(r.trials.size(), 24u);
  std::map<TrialStatus, int> by_status;
  for (const auto& t : r.trials) {
    ++by_status[t.trial.status];
    auto stored = cache.find(t.trial.key);
    ASSERT_TRUE(stored);
    EXPECT_EQ(stored->status, t.trial.status);
    EXPECT_EQ(stored->message, t.trial.message);
    if (t.trial.status != TrialStatus::kOk) {
      EXPECT_FALSE(t.trial.message.empty());
      EXPECT_EQ(t.trial.time_us, 0);  // the failure's time is not kept
      EXPECT_TRUE(std::isinf(t.trial.score()));
    }
  }
  EXPECT_EQ(by_status[TrialStatus::kLaunch], 4);     // A=9 and B=10
  EXPECT_EQ(by_status[TrialStatus::kCompile], 10);   // C=11, the rest
  EXPECT_EQ(by_status[TrialStatus::kIncorrect], 2);  // A=0, D=0, C=7
  EXPECT_EQ(by_status[TrialStatus::kOk], 8);
  EXPECT_EQ(r.failed, 16u);
  ASSERT_TRUE(r.best);
  EXPECT_EQ(o.space.describe(r.best->config), "A=9 B=3 C=7 D=5");
  EXPECT_DOUBLE_EQ(r.best->trial.time_us, 10.0);
}

TEST(Tuner, NothingCorrectMeansNoBest) {
  InMemoryTrialCache cache;
  FunctionObjective objective([](const Config&) {
    return Measurement{TrialStatus::kHang, 0, "watchdog: rank 1 stuck in run", 1, 20};
  });
  TuneReport r = run(landscape_options("random", 10), cache, objective);
  EXPECT_EQ(r.trials.size(), 10u);
  EXPECT_EQ(r.failed, 10u);
  EXPECT_FALSE(r.best);
}

TEST(Tuner, ExhaustiveStopsWhenTheSpaceIsDone) {
  TuneOptions o;
  o.space = parse_markers(
      "// mgk:tune X range(1, 64, *2)\n"
      "// mgk:tune Y 1 2 3\n"
      "// mgk:tune-constraint X * Y <= 32\n");
  o.context = context();
  o.max_evals = 100;  // "auto": the 15 valid configurations fit
  InMemoryTrialCache cache;
  FunctionObjective objective([&](const Config& c) {
    const double x = *o.space.parameters()[0].values[c[0]].number;
    const double y = *o.space.parameters()[1].values[c[1]].number;
    return Measurement{TrialStatus::kOk, std::abs(x - 8) + std::abs(y - 2) + 1, "", 0, 0};
  });
  TuneReport r = run(o, cache, objective);
  EXPECT_EQ(r.strategy, "exhaustive");
  EXPECT_EQ(r.stop, StopReason::kExhausted);
  EXPECT_EQ(r.trials.size(), 15u);
  ASSERT_TRUE(r.best);
  EXPECT_EQ(o.space.describe(r.best->config), "X=8 Y=2");
}

TEST(Tuner, TheTimeBudgetStopsNewMeasurements) {
  FakeClock clock;
  InMemoryTrialCache cache;
  FunctionObjective objective(Landscape::measure, &clock, 10.0);  // each takes 10 s
  TuneOptions o = landscape_options("random", 100);
  o.clock = &clock;
  o.max_seconds = 35;
  TuneReport r = run(o, cache, objective);
  EXPECT_EQ(r.stop, StopReason::kMaxTime);
  EXPECT_EQ(r.measured, 4u);  // started at 0, 10, 20 and 30 s; none at 40 s
  EXPECT_DOUBLE_EQ(r.seconds, 40.0);
  EXPECT_NE(r.message.find("time budget of 35 s"), std::string::npos) << r.message;

  // Cached trials cost no time: a re-run replays 4 and measures 4 more.
  TuneReport again = run(o, cache, objective);
  EXPECT_EQ(again.from_cache, 4u);
  EXPECT_EQ(again.measured, 4u);
  EXPECT_EQ(again.stop, StopReason::kMaxTime);
}

TEST(Tuner, ASecondRunWithTheSameCacheMeasuresNothing) {
  InMemoryTrialCache cache;
  FunctionObjective first(Landscape::measure);
  TuneReport a = run(landscape_options("evolutionary", 60), cache, first);
  ASSERT_EQ(a.measured, 60u);

  FunctionObjective second(Landscape::measure);
  TuneReport b = run(landscape_options("evolutionary", 60), cache, second);
  EXPECT_EQ(b.measured, 0u);
  EXPECT_EQ(b.from_cache, 60u);
  EXPECT_TRUE(second.measured.empty());
  EXPECT_EQ(second.prepared, 0);  // nothing is compiled ahead for cached trials either
  EXPECT_EQ(configs_of(b), configs_of(a));
  ASSERT_TRUE(a.best && b.best);
  EXPECT_EQ(b.best->config, a.best->config);
  for (const auto& t : b.trials) EXPECT_TRUE(t.trial.from_cache);
  EXPECT_EQ(cache.records(), 60u);
}

TEST(Tuner, AnInterruptedRunResumesIntoTheSameSearch) {
  // Reference: one uninterrupted run of 80.
  InMemoryTrialCache clean_cache;
  FunctionObjective clean_objective(Landscape::measure);
  TuneReport clean = run(landscape_options("evolutionary", 80), clean_cache, clean_objective);

  // The same search cut short by its time budget after 23 measurements, then resumed.
  InMemoryTrialCache cache;
  FakeClock clock;
  FunctionObjective objective(Landscape::measure, &clock, 1.0);
  TuneOptions cut = landscape_options("evolutionary", 80);
  cut.clock = &clock;
  cut.max_seconds = 23;
  TuneReport part = run(cut, cache, objective);
  ASSERT_EQ(part.measured, 23u);

  FunctionObjective resumed_objective(Landscape::measure);
  TuneReport resumed = run(landscape_options("evolutionary", 80), cache, resumed_objective);
  EXPECT_EQ(resumed.from_cache, 23u);
  EXPECT_EQ(resumed.measured, 57u);
  EXPECT_EQ(configs_of(resumed), configs_of(clean));
  ASSERT_TRUE(resumed.best && clean.best);
  EXPECT_EQ(resumed.best->config, clean.best->config);

  // A larger budget goes on from there.
  FunctionObjective more_objective(Landscape::measure);
  TuneReport more = run(landscape_options("evolutionary", 100), cache, more_objective);
  EXPECT_EQ(more.from_cache, 80u);
  EXPECT_EQ(more.measured, 20u);
}

TEST(Tuner, AnInfrastructureFailureStopsTheRunAfterRecordingIt) {
  InMemoryTrialCache cache;
  int calls = 0;
  FunctionObjective broken([&](const Config& c) {
    if (++calls == 5) return Measurement{TrialStatus::kError, 0, "cannot start mgk-harness", 0, 0};
    return Landscape::measure(c);
  });
  TuneReport r = run(landscape_options("random", 30), cache, broken);
  EXPECT_EQ(r.stop, StopReason::kInfrastructure);
  EXPECT_EQ(r.trials.size(), 5u);
  EXPECT_NE(r.message.find("cannot start mgk-harness"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("re-run measures it again"), std::string::npos) << r.message;
  const Trial& failed = r.trials.back().trial;
  ASSERT_TRUE(cache.find(failed.key));
  EXPECT_EQ(cache.find(failed.key)->status, TrialStatus::kError);

  // The next run trusts the four good trials and measures the errored one again.
  FunctionObjective healthy(Landscape::measure);
  TuneReport again = run(landscape_options("random", 30), cache, healthy);
  EXPECT_EQ(again.stop, StopReason::kMaxEvals);
  EXPECT_EQ(again.from_cache, 4u);
  EXPECT_EQ(again.measured, 26u);
  ASSERT_FALSE(healthy.measured.empty());
  EXPECT_EQ(healthy.measured.front(), r.trials.back().config);
  EXPECT_NE(cache.find(failed.key)->status, TrialStatus::kError);
}

TEST(Tuner, CtrlCEndsTheRunKeepingWhatWasMeasured) {
  InMemoryTrialCache cache;
  int calls = 0;
  FunctionObjective objective([&](const Config& c) {
    if (++calls == 3) throw Interrupted();  // Ctrl-C during the evaluation
    return Landscape::measure(c);
  });
  TuneReport r = run(landscape_options("random", 30), cache, objective);
  EXPECT_EQ(r.stop, StopReason::kInterrupted);
  EXPECT_EQ(r.trials.size(), 2u);  // the interrupted one is not a result
  EXPECT_EQ(cache.size(), 2u);

  // The flag set between evaluations stops the run before the next one.
  install_interrupt_handler();
  int more = 0;
  FunctionObjective flagged([&](const Config& c) {
    if (++more == 4) std::raise(SIGINT);
    return Landscape::measure(c);
  });
  TuneReport f = run(landscape_options("random", 30, 9), cache, flagged);
  clear_interrupt();
  EXPECT_EQ(f.stop, StopReason::kInterrupted);
  EXPECT_EQ(f.measured, 4u);
}

// Checks that configuration k+1 is prepared while configuration k is measured.
class OverlapObjective : public Objective {
 public:
  explicit OverlapObjective(std::size_t total) : total_(total) {}

  void prepare(const Config& c) override {
    std::lock_guard<std::mutex> lock(mu_);
    prepared_.insert(c);
    cv_.notify_all();
  }

  Measurement measure(const Config& c) override {
    std::unique_lock<std::mutex> lock(mu_);
    if (prepared_.count(c)) ++prepared_before_measure;
    const std::size_t index = measured++;
    if (index + 1 < total_ &&
        cv_.wait_for(lock, std::chrono::seconds(10), [&] { return prepared_.size() > index + 1; }))
      ++overlapped;
    return Measurement{TrialStatus::kOk, 100.0 + double(index), "", 0, 0};
  }

  std::size_t measured = 0, overlapped = 0, prepared_before_measure = 0;

 private:
  std::size_t total_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::set<Config> prepared_;
};

TEST(Tuner, CompilesTheNextConfigurationsWhileMeasuringTheCurrentOne) {
  InMemoryTrialCache cache;
  OverlapObjective objective(20);
  TuneReport r = run(landscape_options("random", 20), cache, objective);  // one batch of 20
  EXPECT_EQ(r.measured, 20u);
  EXPECT_EQ(objective.prepared_before_measure, 20u);
  EXPECT_EQ(objective.overlapped, 19u);
}

TEST(Tuner, ReportsEveryTrialInOrderThroughTheCallback) {
  InMemoryTrialCache cache;
  FunctionObjective objective(Landscape::measure);
  TuneOptions o = landscape_options("random", 12);
  std::vector<Config> seen;
  o.on_trial = [&](const Trial&, const Config& c) { seen.push_back(c); };
  TuneReport r = run(o, cache, objective);
  EXPECT_EQ(seen, configs_of(r));
  nlohmann::json j = r.to_json();
  EXPECT_EQ(j["strategy"], "random");
  EXPECT_EQ(j["stop"], "max_evals");
  EXPECT_EQ(j["trials"].size(), 12u);
  EXPECT_EQ(j["measured"], 12);
  EXPECT_TRUE(j["best"].is_object());
  EXPECT_TRUE(j["best"]["params"].is_object());
}

TEST(Tuner, RefusesAnEmptySpaceAndAZeroBudget) {
  InMemoryTrialCache cache;
  FunctionObjective objective(Landscape::measure);
  TuneOptions empty;
  empty.context = context();
  EXPECT_THROW(run(empty, cache, objective), UsageError);
  TuneOptions zero = landscape_options("random", 0);
  EXPECT_THROW(run(zero, cache, objective), UsageError);
  EXPECT_THROW(run(landscape_options("simplex", 5), cache, objective), UsageError);
}

}  // namespace
}  // namespace mgk::tune
