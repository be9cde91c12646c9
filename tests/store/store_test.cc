#include "store/store.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <thread>

#include "common/error.h"
#include "sample_data.h"
#include "store/database.h"
#include "common/hash.h"
#include "store/statement.h"
#include "support/test_paths.h"

namespace mgk::store {
namespace {

using test::eval_result;
using test::turn;

class StoreTest : public ::testing::Test {
 protected:
  mgk::test::TempDir dir{"mgk-store"};
  Store store = Store::open(dir.path() / "mgk.db");

  int count(const std::string& table) {
    Database db = Database::open(store.path());
    Statement s(db, "SELECT COUNT(*) FROM " + table);
    s.step();
    return int(s.int64(0));
  }
};

TEST_F(StoreTest, RunRoundTrip) {
  int64_t id =
      store.begin_run({"bench", "openai:gpt-test", {{"samples", 4}, {"problems", "tp/*"}}});
  auto run = store.run(id);
  ASSERT_TRUE(run);
  EXPECT_EQ(run->kind, "bench");
  EXPECT_EQ(run->model, "openai:gpt-test");
  EXPECT_EQ(run->args["samples"], 4);
  EXPECT_EQ(run->status, Status::kRunning);
  EXPECT_EQ(run->uuid.size(), 32u);
  EXPECT_EQ(run->pid, int64_t(getpid()));
  EXPECT_FALSE(run->ended_at);
  EXPECT_EQ(run->created_at.size(), 24u);  // 2026-01-05T12:34:56.789Z

  store.finish_run(id, Status::kInterrupted, {{"pass@1", 0.25}});
  run = store.run(id);
  EXPECT_EQ(run->status, Status::kInterrupted);
  EXPECT_EQ(run->summary["pass@1"], 0.25);
  EXPECT_TRUE(run->ended_at);
  EXPECT_FALSE(store.run(id + 1));
}

TEST_F(StoreTest, BadNamesAndIdsAreClearErrors) {
  EXPECT_THROW(store.begin_run({"train", "", {}}), UsageError);
  int64_t run = store.begin_run({"generate", "m", {}});
  EXPECT_THROW(store.begin_attempt(test::attempt_start(run, "p", "m", "chat")), UsageError);
  EXPECT_THROW(store.begin_attempt(test::attempt_start(run + 7, "p")), UsageError);
  EXPECT_THROW(store.record_turn(turn(999, 0)), UsageError);
  EXPECT_THROW(store.finish_attempt(999, {}), UsageError);
  EXPECT_THROW(store.finish_run(999, Status::kDone), UsageError);
  EXPECT_THROW(status_from_string("finished"), UsageError);
}

TEST_F(StoreTest, TurnsRoundTripAndTotalsFollow) {
  int64_t run = store.begin_run({"generate", "anthropic:claude-test", {}});
  int64_t attempt = store.begin_attempt(test::attempt_start(run, "collectives/all_reduce"));
  std::string kernel = store.put_kernel("__global__ void k() {}\n");

  TurnRecord t0 = turn(attempt, 0, 1000, 300, 0.25);
  t0.kernel_hash = kernel;
  store.record_turn(t0);
  store.record_turn(turn(attempt, 1, 2000, 700, 0.5));

  auto turns = store.turns(attempt);
  ASSERT_EQ(turns.size(), 2u);
  EXPECT_EQ(turns[0].messages, t0.messages);
  EXPECT_EQ(turns[0].reply, t0.reply);
  EXPECT_EQ(turns[0].tokens_cached, 500);
  EXPECT_EQ(turns[0].tokens_reasoning, 60);
  EXPECT_EQ(turns[0].finish_reason, "stop");
  EXPECT_EQ(turns[0].action, "kernel");
  EXPECT_EQ(turns[0].kernel_hash, kernel);
  EXPECT_EQ(turns[0].feedback, t0.feedback);
  EXPECT_DOUBLE_EQ(turns[0].latency_s, 2.5);
  EXPECT_FALSE(turns[1].kernel_hash);
  EXPECT_FALSE(turns[1].created_at.empty());

  auto a = store.attempt(attempt);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->turns, 2);
  EXPECT_EQ(a->tokens_in, 3000);
  EXPECT_EQ(a->tokens_out, 1000);
  EXPECT_EQ(a->tokens_cached, 1500);
  EXPECT_EQ(a->tokens_reasoning, 200);
  EXPECT_DOUBLE_EQ(a->cost_usd.value(), 0.75);
  auto r = store.run(run);
  EXPECT_EQ(r->tokens_in, 3000);
  EXPECT_DOUBLE_EQ(r->cost_usd.value(), 0.75);

  // A turn index stored twice is refused, and the totals do not move.
  EXPECT_THROW(store.record_turn(turn(attempt, 1, 5, 5, 5.0)), Error);
  EXPECT_DOUBLE_EQ(store.attempt(attempt)->cost_usd.value(), 0.75);
}

// The agent stores a reply before it acts on it (pending), then completes it once; its
// tokens and cost count from the first write.
TEST_F(StoreTest, APendingTurnIsCompletedOnceAndCountsFromTheStart) {
  int64_t run = store.begin_run({"generate", "m", {}});
  int64_t attempt = store.begin_attempt(test::attempt_start(run, "p"));
  TurnRecord t = turn(attempt, 0, 1000, 300, 0.25);
  t.action = kTurnPending;
  t.feedback = "";
  store.record_turn(t);
  EXPECT_DOUBLE_EQ(store.attempt(attempt)->cost_usd.value(), 0.25);
  const std::string kernel = store.put_kernel("__global__ void k() {}\n");
  store.complete_turn(attempt, 0, "kernel", kernel, "correct");
  auto turns = store.turns(attempt);
  ASSERT_EQ(turns.size(), 1u);
  EXPECT_EQ(turns[0].action, "kernel");
  EXPECT_EQ(turns[0].kernel_hash, kernel);
  EXPECT_EQ(turns[0].feedback, "correct");
  EXPECT_THROW(store.complete_turn(attempt, 0, "kernel", kernel, "again"), Error) << "completed twice";
  EXPECT_THROW(store.complete_turn(attempt, 1, "kernel", std::nullopt, "none"), Error) << "no such turn";
  EXPECT_DOUBLE_EQ(store.attempt(attempt)->cost_usd.value(), 0.25);
}

TEST_F(StoreTest, ATurnNamingAnUnstoredKernelIsRefusedWhole) {
  int64_t run = store.begin_run({"generate", "m", {}});
  int64_t attempt = store.begin_attempt(test::attempt_start(run, "p"));
  TurnRecord t = turn(attempt, 0);
  t.kernel_hash = sha256_hex("never stored");
  try {
    store.record_turn(t);
    FAIL() << "should throw";
  } catch (const Error& e) {
    ASSERT_FALSE(e.context().empty());
    EXPECT_NE(e.context().back().find("put_kernel"), std::string::npos);
  }
  EXPECT_EQ(store.attempt(attempt)->tokens_in, 0);  // the totals rolled back with the turn
  EXPECT_TRUE(store.turns(attempt).empty());
}

TEST_F(StoreTest, KernelsAreStoredOncePerSource) {
  std::string a = store.put_kernel("__global__ void a() {}\n");
  std::string again = store.put_kernel("__global__ void a() {}\n");
  std::string b = store.put_kernel("__global__ void b() {}\n");
  EXPECT_EQ(a, again);
  EXPECT_NE(a, b);
  EXPECT_EQ(a, sha256_hex("__global__ void a() {}\n"));
  EXPECT_EQ(count("kernels"), 2);
  EXPECT_EQ(store.kernel_source(b), "__global__ void b() {}\n");
  EXPECT_FALSE(store.kernel_source(sha256_hex("nothing")));
}

TEST_F(StoreTest, EvaluationFromResultJson) {
  auto correct = EvaluationRecord::from_result(eval_result("correct", {3.0, 1.0, 2.0, 5.0}), "h");
  EXPECT_EQ(correct.kernel_hash, "h");
  EXPECT_EQ(correct.problem, "collectives/all_reduce");
  EXPECT_EQ(correct.world_size, 2);
  EXPECT_EQ(correct.gpus, (std::vector<int>{0, 1}));
  EXPECT_EQ(correct.verdict, "correct");
  EXPECT_EQ(correct.speedup_min, 1.0);
  EXPECT_EQ(correct.speedup_median, 2.5);
  EXPECT_EQ(correct.speedup_max, 5.0);

  auto wrong = EvaluationRecord::from_result(eval_result("incorrect", {3.0}), "h");
  EXPECT_EQ(wrong.verdict, "incorrect");
  EXPECT_FALSE(wrong.speedup_min);  // a wrong kernel has no speedup
  EXPECT_THROW(EvaluationRecord::from_result(nlohmann::json::array(), "h"), Error);
}

TEST_F(StoreTest, EvaluationRoundTripTakesTheRunFromTheAttempt) {
  int64_t run = store.begin_run({"generate", "m", {}});
  int64_t attempt = store.begin_attempt(test::attempt_start(run, "collectives/all_reduce"));
  std::string kernel = store.put_kernel("k");
  auto e = EvaluationRecord::from_result(eval_result("correct", {1.5, 2.5, 2.0}), kernel);
  e.attempt_id = attempt;
  e.turn_index = 3;
  int64_t id = store.record_evaluation(e);

  auto stored = store.evaluations_of_attempt(attempt);
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_EQ(stored[0].id, id);
  EXPECT_EQ(stored[0].run_id, run);
  EXPECT_EQ(stored[0].turn_index, 3);
  EXPECT_EQ(stored[0].kernel_hash, kernel);
  EXPECT_EQ(stored[0].speedup_median, 2.0);
  EXPECT_EQ(stored[0].result.to_json(), e.result.to_json());

  // `mgk eval` by hand: no run, no attempt.
  auto loose = EvaluationRecord::from_result(eval_result("compile_error", {}), kernel);
  EXPECT_GT(store.record_evaluation(loose), id);
  EXPECT_EQ(count("evaluations WHERE run_id IS NULL AND attempt_id IS NULL"), 1);

  auto unknown = EvaluationRecord::from_result(eval_result("correct", {1.0}), sha256_hex("x"));
  EXPECT_THROW(store.record_evaluation(unknown), Error);
}

TEST_F(StoreTest, BestKernelIsTheStoredOneElseTheBestCorrectSoFar) {
  int64_t run = store.begin_run({"generate", "m", {}});
  int64_t attempt = store.begin_attempt(test::attempt_start(run, "p"));
  auto record = [&](const std::string& src, const std::string& verdict,
                    std::vector<double> speedups) {
    std::string k = store.put_kernel(src);
    auto e = EvaluationRecord::from_result(eval_result(verdict, speedups), k);
    e.attempt_id = attempt;
    store.record_evaluation(e);
    return k;
  };
  EXPECT_FALSE(store.attempt(attempt)->best_kernel_hash);
  record("fast but wrong", "incorrect", {9.0});
  std::string steady = record("steady", "correct", {1.8, 1.9});
  record("spiky", "correct", {0.9, 4.0});  // higher max, lower min: not the best
  auto a = store.attempt(attempt);
  EXPECT_EQ(a->best_kernel_hash, steady);
  EXPECT_EQ(a->best_speedup, 1.8);

  std::string chosen = store.put_kernel("chosen by the agent");
  store.finish_attempt(attempt, {Status::kDone, "submitted", chosen});
  a = store.attempt(attempt);
  EXPECT_EQ(a->best_kernel_hash, chosen);
  EXPECT_EQ(a->status, Status::kDone);
  EXPECT_EQ(a->exit_reason, "submitted");
  EXPECT_TRUE(a->ended_at);

  auto detail = store.attempt_detail(attempt);
  ASSERT_TRUE(detail);
  EXPECT_EQ(detail->best_kernel_source, "chosen by the agent");
  EXPECT_EQ(detail->evaluations.size(), 3u);
  EXPECT_FALSE(store.attempt_detail(attempt + 100));
}

TEST_F(StoreTest, AttemptsToResumeAndReopen) {
  int64_t run = store.begin_run({"bench", "m", {}});
  int64_t done = store.begin_attempt(test::attempt_start(run, "a"));
  int64_t cut = store.begin_attempt(test::attempt_start(run, "b"));
  int64_t left = store.begin_attempt(test::attempt_start(run, "c"));
  int64_t other_run = store.begin_run({"bench", "m", {}});
  store.begin_attempt(test::attempt_start(other_run, "d"));
  store.finish_attempt(done, {Status::kDone, "submitted", {}});
  store.finish_attempt(cut, {Status::kInterrupted, "interrupted", {}});

  auto resume = store.attempts_to_resume(run);
  ASSERT_EQ(resume.size(), 2u);
  EXPECT_EQ(resume[0].id, cut);
  EXPECT_EQ(resume[1].id, left);
  EXPECT_EQ(store.attempts_of_run(run).size(), 3u);

  auto reopened = store.reopen_attempt(cut);
  EXPECT_EQ(reopened.status, Status::kRunning);
  EXPECT_FALSE(reopened.ended_at);
  EXPECT_THROW(store.reopen_attempt(12345), UsageError);
}

TEST_F(StoreTest, CalibrationsLatestPerMachine) {
  MachineKey h200x8{"NVIDIA H200", 8, "580.65.06"};
  MachineKey h200x2{"NVIDIA H200", 2, "580.65.06"};
  EXPECT_FALSE(store.latest_calibration(h200x8));
  store.record_calibration(h200x8, {{"link_gbps", 300}});
  store.record_calibration(h200x8, {{"link_gbps", 350}});
  store.record_calibration(h200x2, {{"link_gbps", 400}});
  EXPECT_EQ((*store.latest_calibration(h200x8))["link_gbps"], 350);
  EXPECT_EQ((*store.latest_calibration(h200x2))["link_gbps"], 400);
  EXPECT_FALSE(store.latest_calibration({"NVIDIA H200", 8, "570.00"}));
}

TEST_F(StoreTest, ManyThreadsShareOneStore) {
  int64_t run = store.begin_run({"bench", "m", {}});
  constexpr int kThreads = 6, kTurns = 20;
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back([&, i] {
      int64_t attempt = store.begin_attempt(test::attempt_start(run, "p" + std::to_string(i)));
      for (int t = 0; t < kTurns; ++t) {
        TurnRecord rec = turn(attempt, t, 10, 1, 0.001);
        rec.kernel_hash = store.put_kernel("shared kernel " + std::to_string(t % 3));
        store.record_turn(rec);
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(count("turns"), kThreads * kTurns);
  EXPECT_EQ(count("kernels"), 3);
  EXPECT_EQ(store.run(run)->tokens_in, kThreads * kTurns * 10);
}

}  // namespace
}  // namespace mgk::store
