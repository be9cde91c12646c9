#include <gtest/gtest.h>

#include <set>

#include "common/error.h"
#include "sample_data.h"
#include "store/database.h"
#include "store/statement.h"
#include "store/store.h"
#include "support/test_paths.h"

namespace mgk::store {
namespace {

// Two shards as two Slurm array tasks would write them, sharing one kernel source and one
// tuning key, plus a target that already has rows of its own (so ids must be remapped).
class MergeTest : public ::testing::Test {
 protected:
  mgk::test::TempDir dir{"mgk-merge"};
  std::filesystem::path target_path = dir.path() / "all.db";
  std::filesystem::path shard_a = dir.path() / "shard-0.db";
  std::filesystem::path shard_b = dir.path() / "shard-1.db";
  int64_t target_attempt = 0;

  TuningTrial trial(std::string status, double time_us) {
    return {"kh",  "collectives/all_reduce", "medium",          8,       "NVIDIA H200",
            "580", {{"BLOCKS", 16}},         std::move(status), time_us, ""};
  }

  void SetUp() override {
    Store target = Store::open(target_path);
    target_attempt = test::record_sample_attempt(target, "collectives/reduce_scatter");

    Store a = Store::open(shard_a);
    test::record_sample_attempt(a, "collectives/all_reduce");
    test::record_sample_attempt(a, "tp/ag_gemm");
    std::string shared = a.put_kernel("// the same kernel in both shards\n");
    a.record_evaluation(EvaluationRecord::from_result(test::eval_result("correct", {1.1}), shared));
    a.record_tuning_trial(trial("error", 0));
    a.record_calibration({"NVIDIA H200", 8, "580"}, {{"link_gbps", 350}});

    Store b = Store::open(shard_b);
    int64_t attempt = test::record_sample_attempt(b, "collectives/all_reduce");
    std::string shared_b = b.put_kernel("// the same kernel in both shards\n");
    TurnRecord extra = test::turn(attempt, 2);
    extra.kernel_hash = shared_b;
    b.record_turn(extra);
    b.record_tuning_trial(trial("ok", 20.0));  // measured later than shard a's: wins
  }

  int count(Database& db, const std::string& what) {
    Statement s(db, "SELECT COUNT(*) FROM " + what);
    s.step();
    return int(s.int64(0));
  }
};

TEST_F(MergeTest, CopiesRunsWithNewIdsAndKernelsOnce) {
  Store target = Store::open(target_path);
  MergeReport ra = target.merge_from(shard_a);
  EXPECT_EQ(ra.runs, 2);
  EXPECT_EQ(ra.attempts, 2);
  EXPECT_EQ(ra.turns, 4);
  EXPECT_EQ(ra.evaluations, 5);  // 2 per attempt + the one of no run
  EXPECT_EQ(ra.kernels_added, 5);
  EXPECT_EQ(ra.tuning_trials, 1);
  EXPECT_EQ(ra.calibrations, 1);

  MergeReport rb = target.merge_from(shard_b);
  EXPECT_EQ(rb.runs, 1);
  EXPECT_EQ(rb.turns, 3);
  EXPECT_EQ(rb.kernels_added, 0);  // every source of shard b is already there
  EXPECT_EQ(rb.tuning_trials, 1);

  // Every attempt kept its own turns and evaluations under its new id.
  auto all = target.history({});
  ASSERT_EQ(all.size(), 4u);
  std::set<int64_t> ids;
  for (const auto& a : all) {
    ids.insert(a.id);
    auto detail = target.attempt_detail(a.id);
    ASSERT_TRUE(detail);
    EXPECT_EQ(detail->evaluations.size(), 2u) << a.problem;
    for (const auto& e : detail->evaluations) {
      EXPECT_EQ(e.attempt_id, a.id);
      EXPECT_EQ(e.run_id, a.run_id);
      EXPECT_EQ(e.problem, a.problem);
    }
    for (const auto& t : detail->turns) EXPECT_EQ(t.attempt_id, a.id);
    EXPECT_EQ(a.best_speedup, 1.5);
    ASSERT_TRUE(detail->best_kernel_source);
    EXPECT_NE(detail->best_kernel_source->find(a.problem), std::string::npos);
    auto run = target.run(a.run_id);
    ASSERT_TRUE(run);
    EXPECT_EQ(run->model, a.model);
  }
  EXPECT_EQ(ids.size(), 4u);
  EXPECT_EQ(target.attempt(target_attempt)->problem, "collectives/reduce_scatter");

  HistoryFilter newest_all_reduce;
  newest_all_reduce.problem = "collectives/all_reduce";
  newest_all_reduce.limit = 1;
  auto from_b = target.history(newest_all_reduce);
  ASSERT_EQ(from_b.size(), 1u);
  EXPECT_EQ(from_b[0].turns, 3);
  EXPECT_EQ(from_b[0].tokens_in, 300);  // totals copied with the attempt

  auto trials = target.tuning_trials();
  ASSERT_EQ(trials.size(), 1u);
  EXPECT_EQ(trials[0].status, "ok");
  EXPECT_TRUE(target.latest_calibration({"NVIDIA H200", 8, "580"}));

  Database db = Database::open(target_path);
  EXPECT_EQ(db.pragma("foreign_key_check"), "");
  EXPECT_EQ(count(db, "kernels"), 2 + 5);
}

TEST_F(MergeTest, MergingAShardAgainAddsNothing) {
  Store target = Store::open(target_path);
  target.merge_from(shard_a);
  MergeReport again = target.merge_from(shard_a);
  EXPECT_EQ(again.runs, 0);
  EXPECT_EQ(again.runs_already_present, 2);
  EXPECT_EQ(again.attempts, 0);
  EXPECT_EQ(again.turns, 0);
  EXPECT_EQ(again.evaluations, 0);
  EXPECT_EQ(again.tuning_trials, 0);
  EXPECT_EQ(again.calibrations, 0);
  EXPECT_EQ(target.history({}).size(), 3u);
}

TEST_F(MergeTest, RefusesItselfAndMissingFiles) {
  Store target = Store::open(target_path);
  EXPECT_THROW(target.merge_from(target_path), UsageError);
  EXPECT_THROW(target.merge_from(dir.path() / "missing.db"), UsageError);
  EXPECT_EQ(target.history({}).size(), 1u);
}

TEST_F(MergeTest, AShardFromANewerMgkIsRefusedAndNothingIsCopied) {
  {
    Database db = Database::open(shard_b);
    db.exec("PRAGMA user_version = 999");
  }
  Store target = Store::open(target_path);
  EXPECT_THROW(target.merge_from(shard_b), Error);
  EXPECT_EQ(target.history({}).size(), 1u);
  // The connection is still usable after the failed merge.
  EXPECT_EQ(target.merge_from(shard_a).runs, 2);
}

}  // namespace
}  // namespace mgk::store
