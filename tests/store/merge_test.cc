#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "common/error.h"
#include "common/file.h"
#include "common/hash.h"
#include "sample_data.h"
#include "store/database.h"
#include "store/migrations.h"
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

TEST_F(MergeTest, MergingAShardAgainAfterItGrewBringsInWhatIsNew) {
  auto growing = dir.path() / "growing.db";
  int64_t run = 0, attempt = 0;
  std::string kernel;
  {
    Store s = Store::open(growing);
    run = s.begin_run({"generate", "anthropic:claude-test", {}});
    attempt = s.begin_attempt(test::attempt_start(run, "collectives/broadcast"));
    kernel = s.put_kernel("// broadcast, first try\n");
    TurnRecord t0 = test::turn(attempt, 0, 100, 10, 0.25);
    t0.kernel_hash = kernel;
    s.record_turn(t0);
  }
  Store target = Store::open(target_path);
  MergeReport first = target.merge_from(growing);
  EXPECT_EQ(first.runs, 1);
  EXPECT_EQ(first.turns, 1);
  HistoryFilter broadcast;
  broadcast.problem = "collectives/broadcast";
  ASSERT_EQ(target.history(broadcast).size(), 1u);
  EXPECT_EQ(target.history(broadcast)[0].status, Status::kRunning);

  {  // The task goes on: a second turn, its evaluation, and the end of attempt and run.
    Store s = Store::open(growing);
    TurnRecord t1 = test::turn(attempt, 1, 200, 20, 0.5);
    t1.kernel_hash = kernel;
    s.record_turn(t1);
    auto e = EvaluationRecord::from_result(test::eval_result("correct", {1.25}), kernel);
    e.attempt_id = attempt;
    e.turn_index = 1;
    s.record_evaluation(e);
    s.finish_attempt(attempt, {Status::kDone, "turns_exhausted", kernel});
    s.finish_run(run, Status::kDone, {{"attempts", 1}});
  }
  MergeReport second = target.merge_from(growing);
  EXPECT_EQ(second.runs, 0);
  EXPECT_EQ(second.runs_already_present, 1);
  EXPECT_EQ(second.runs_updated, 1);
  EXPECT_EQ(second.attempts, 0);
  EXPECT_EQ(second.attempts_updated, 1);
  EXPECT_EQ(second.turns, 1);
  EXPECT_EQ(second.evaluations, 1);

  auto merged = target.history(broadcast);
  ASSERT_EQ(merged.size(), 1u);  // the same attempt, not a second copy
  const AttemptSummary& a = merged[0];
  EXPECT_EQ(a.status, Status::kDone);
  EXPECT_EQ(a.exit_reason, "turns_exhausted");
  EXPECT_EQ(a.turns, 2);
  EXPECT_EQ(a.tokens_in, 300);
  EXPECT_DOUBLE_EQ(a.cost_usd.value(), 0.75);
  EXPECT_EQ(a.best_kernel_hash, kernel);
  EXPECT_EQ(a.best_speedup, 1.25);
  auto merged_run = target.run(a.run_id);
  EXPECT_EQ(merged_run->status, Status::kDone);
  EXPECT_EQ(merged_run->summary, (nlohmann::json{{"attempts", 1}}));
  EXPECT_DOUBLE_EQ(merged_run->cost_usd.value(), 0.75);
  EXPECT_EQ(target.evaluations_of_attempt(a.id).size(), 1u);

  MergeReport third = target.merge_from(growing);  // nothing new now
  EXPECT_EQ(third.runs_updated + third.attempts_updated + third.turns + third.evaluations, 0);
}

TEST_F(MergeTest, NothingIsWrittenToTheShard) {
  {
    Database db = Database::open(shard_a);
    db.exec("PRAGMA journal_mode=DELETE");
  }
  const std::string before = sha256_hex(read_file(shard_a, "the shard"));
  Store target = Store::open(target_path);
  EXPECT_EQ(target.merge_from(shard_a).runs, 2);
  EXPECT_EQ(sha256_hex(read_file(shard_a, "the shard")), before);
  for (const char* suffix : {"-wal", "-shm", "-journal"})
    EXPECT_FALSE(std::filesystem::exists(shard_a.string() + suffix)) << suffix;
  Database db = Database::open(shard_a, Database::Mode::kReadOnly);
  EXPECT_EQ(db.pragma("journal_mode"), "delete");
}

TEST_F(MergeTest, AShardAtAnOlderSchemaIsMigratedInACopyNotInPlace) {
  auto old_shard = dir.path() / "old.db";
  {
    Database db = Database::open(old_shard);
    migrate(db, schema_migrations().first(1));
    db.exec(
        "INSERT INTO runs (uuid, kind, created_at) VALUES ('old-run', 'eval', "
        "'2026-01-01T00:00:00.000Z')");
  }
  const std::string before = sha256_hex(read_file(old_shard, "the shard"));
  Store target = Store::open(target_path);
  EXPECT_EQ(target.merge_from(old_shard).runs, 1);
  EXPECT_EQ(sha256_hex(read_file(old_shard, "the shard")), before);
  for (const auto& entry : std::filesystem::directory_iterator(dir.path()))
    EXPECT_EQ(entry.path().string().find(".merge-"), std::string::npos) << entry.path();
}

TEST_F(MergeTest, ADamagedShardIsBlamedOnItselfAndNothingIsCopied) {
  {
    Store a = Store::open(shard_a);
    for (int i = 0; i < 20; ++i) test::record_sample_attempt(a, "tp/filler_" + std::to_string(i));
  }
  {
    Database db = Database::open(shard_a);
    db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  }
  {  // Garbage over the middle of the file, as a bad copy would leave it.
    std::fstream f(shard_a, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(std::streamoff(std::filesystem::file_size(shard_a) / 2));
    f << std::string(8192, '\x5a');
  }
  Store target = Store::open(target_path);
  try {
    target.merge_from(shard_a);
    FAIL() << "a damaged shard should be refused";
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_EQ(m.find("cannot merge " + shard_a.string() + ": the file is damaged"), 0u) << m;
    EXPECT_EQ(m.find(target_path.string()), std::string::npos) << m;
  }
  EXPECT_EQ(target.history({}).size(), 1u);
}

TEST_F(MergeTest, AMergeFailingPartWayLeavesTheTargetAsItWas) {
  {  // A turn naming a kernel the shard does not hold: the copy fails at the turns.
    Database db = Database::open(shard_b);
    db.exec(
        "PRAGMA foreign_keys=OFF; UPDATE turns SET kernel_hash = 'no-such-kernel' "
        "WHERE turn_index = 2");
  }
  Store target = Store::open(target_path);
  EXPECT_THROW(target.merge_from(shard_b), Error);
  Database db = Database::open(target_path);
  EXPECT_EQ(count(db, "runs"), 1);
  EXPECT_EQ(count(db, "attempts"), 1);
  EXPECT_EQ(count(db, "kernels"), 2);
  // The connection is usable and a good shard merges.
  EXPECT_EQ(target.merge_from(shard_a).runs, 2);
}

// The tasks of a Slurm job array each write the same run (its uuid) into a shard of their
// own; merged, in any order and any number of times, they are that one run with every
// task's attempts, whose args and state stay the target's (a shard's run never ends).
TEST(MergeShardsOfOneRun, TheTasksOfAJobArrayFoldIntoTheirRunAndLeaveItsStateAlone) {
  mgk::test::TempDir dir{"mgk-merge-run"};
  Store target = Store::open(dir.path() / "main.db");
  const nlohmann::json args = {{"executor", "slurm"}, {"slurm", {{"jobs", {"12"}}}}};
  const int64_t run = target.begin_run({"bench", "openai:m", args});
  const std::string uuid = target.run(run)->uuid;
  std::vector<std::filesystem::path> shards;
  for (const char* problem : {"collectives/all_reduce", "collectives/gather", "collectives/scatter"}) {
    shards.push_back(dir.path() / ("task-" + std::to_string(shards.size()) + ".db"));
    Store shard = Store::open(shards.back());
    const int64_t r = shard.begin_run({"bench", "openai:m", {{"executor", "slurm"}}}, uuid);
    EXPECT_EQ(shard.run(r)->uuid, uuid);
    const int64_t a = shard.begin_attempt(test::attempt_start(r, problem, "openai:m"));
    shard.record_turn(test::turn(a, 0));
    shard.finish_attempt(a, {Status::kDone, "turns_exhausted", std::nullopt});
  }
  for (int pass = 0; pass < 2; ++pass)
    for (auto s = shards.rbegin(); s != shards.rend(); ++s) {
      MergeReport r = target.merge_from(*s);
      EXPECT_EQ(r.runs, 0);
      EXPECT_EQ(r.attempts, pass == 0 ? 1 : 0) << *s;
    }
  EXPECT_EQ(target.runs_of_kind("bench").size(), 1u);
  EXPECT_EQ(target.attempts_of_run(run).size(), 3u);
  EXPECT_EQ(target.run(run)->status, Status::kRunning);
  EXPECT_EQ(target.run(run)->args, args);
  EXPECT_EQ(target.run(run)->tokens_in, 3 * test::turn(0, 0).tokens_in);
}

}  // namespace
}  // namespace mgk::store
