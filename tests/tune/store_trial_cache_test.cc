#include "tune/store_trial_cache.h"

#include <gtest/gtest.h>

#include "support/test_paths.h"
#include "synthetic.h"
#include "tune/tuner.h"

namespace mgk::tune {
namespace {

Trial trial(const std::string& params, TrialStatus status, double time_us,
            const std::string& size = "medium") {
  Trial t;
  t.key.context = TrialContext{"abc123", "collectives/all_reduce", size, 8, "NVIDIA H200", "13000"};
  t.key.params = params;
  t.status = status;
  t.time_us = time_us;
  t.message = status == TrialStatus::kOk ? "" : "why it failed";
  return t;
}

TEST(StoreTrialCache, RoundTripsTrialsThroughSqlite) {
  mgk::test::TempDir dir;
  store::Store db = store::Store::open(dir.path() / "mgk.db");
  StoreTrialCache cache(db);
  const Trial ok = trial(R"({"BLOCKS":32,"MECH":"kTma","SCALE":0.5})", TrialStatus::kOk, 41.25);
  const Trial hang = trial(R"({"BLOCKS":64,"MECH":"kTma","SCALE":0.5})", TrialStatus::kHang, 0);
  cache.record(ok);
  cache.record(hang);

  auto found = cache.find(ok.key);
  ASSERT_TRUE(found);
  EXPECT_TRUE(found->from_cache);
  EXPECT_EQ(found->status, TrialStatus::kOk);
  EXPECT_DOUBLE_EQ(found->time_us, 41.25);
  EXPECT_EQ(found->key, ok.key);
  auto failed = cache.find(hang.key);
  ASSERT_TRUE(failed);
  EXPECT_EQ(failed->status, TrialStatus::kHang);
  EXPECT_EQ(failed->message, "why it failed");

  // Any other part of the key misses.
  Trial other_size = ok;
  other_size.key.context.size = "large";
  EXPECT_FALSE(cache.find(other_size.key));
  Trial other_gpu = ok;
  other_gpu.key.context.gpu_model = "NVIDIA H100";
  EXPECT_FALSE(cache.find(other_gpu.key));

  // A re-measurement replaces the stored outcome.
  Trial fixed = hang;
  fixed.status = TrialStatus::kOk;
  fixed.time_us = 38;
  fixed.message.clear();
  cache.record(fixed);
  EXPECT_EQ(cache.find(hang.key)->status, TrialStatus::kOk);

  cache.record(trial(R"({"BLOCKS":8,"MECH":"kTma","SCALE":0.5})", TrialStatus::kOk, 50, "small"));
  std::vector<Trial> all = cache.trials_for("abc123", "collectives/all_reduce");
  ASSERT_EQ(all.size(), 3u);
  EXPECT_DOUBLE_EQ(all[0].time_us, 38);  // best first
  EXPECT_TRUE(cache.trials_for("abc123", "collectives/all_gather").empty());
}

TEST(StoreTrialCache, ATuningRunResumesFromTheDatabaseFile) {
  mgk::test::TempDir dir;
  const auto path = dir.path() / "mgk.db";
  TuneOptions o;
  o.space = test::landscape_space();
  o.context = TrialContext{"feed", "collectives/all_reduce", "medium", 4, "NVIDIA H200", "13000"};
  o.strategy = "evolutionary";
  o.max_evals = 40;
  o.seed = 11;
  TuneReport first;
  {
    store::Store db = store::Store::open(path);
    StoreTrialCache cache(db);
    test::FunctionObjective objective(test::Landscape::measure);
    first = run(o, cache, objective);
    ASSERT_EQ(first.measured, 40u);
  }
  store::Store db = store::Store::open(path);  // as a new process would
  StoreTrialCache cache(db);
  test::FunctionObjective objective(test::Landscape::measure);
  TuneReport second = run(o, cache, objective);
  EXPECT_EQ(second.measured, 0u);
  EXPECT_EQ(second.from_cache, 40u);
  ASSERT_TRUE(first.best && second.best);
  EXPECT_EQ(second.best->config, first.best->config);
  EXPECT_DOUBLE_EQ(second.best->trial.time_us, first.best->trial.time_us);
  EXPECT_EQ(cache.trials_for("feed", "collectives/all_reduce").size(), 40u);
}

}  // namespace
}  // namespace mgk::tune
