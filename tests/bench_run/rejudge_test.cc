// Judging a stored run again (bench/rejudge.h) over a real SQLite store, with a judge that
// counts its calls: each attempt copied whole, each judged turn judged anew once, a kernel
// sent twice judged once, and a rejudge cut off by Ctrl-C finished by the next one without
// judging again what it had judged.
#include "bench_run/rejudge.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iterator>

#include "common/interrupt.h"
#include "support/test_paths.h"

namespace mgk::bench_run {
namespace {

class Rejudge : public ::testing::Test {
 protected:
  Rejudge() : store_(store::Store::open(dir_.path() / "r.db")) {
    ::setenv("MGK_HOME", (dir_.path() / "home").c_str(), 1);
    old_run_ = store_.begin_run({"bench", "openai:gpt-test", {{"samples", 1}}});
    // Three turns: kernel A (compile error then), kernel B (correct then), A sent again.
    const std::string a = store_.put_kernel("// kernel A\n"), b = store_.put_kernel("// kernel B\n");
    old_attempt_ = store_.begin_attempt({old_run_, "collectives/all_gather", "openai:gpt-test", "refine", "v1", 0, 2,
                                         {{"turns", 3}, {"compile_only", true}}});
    const std::string hashes[] = {a, b, a};
    for (int t = 0; t < 3; ++t) {
      store::TurnRecord turn;
      turn.attempt_id = old_attempt_;
      turn.index = t;
      turn.reply = "reply " + std::to_string(t);
      turn.tokens_in = 100;
      turn.tokens_out = 10;
      turn.cost_usd = 0.25;
      turn.action = "kernel";
      turn.kernel_hash = hashes[t];
      store_.record_turn(turn);
      nlohmann::json result = {{"verdict", t == 1 ? "compiled" : "compile_error"},
                               {"message", "then"},
                               {"problem", "collectives/all_gather"},
                               {"world_size", 2}};
      store::EvaluationRecord e = store::EvaluationRecord::from_result(result, hashes[t]);
      e.attempt_id = old_attempt_;
      e.turn_index = t;
      store_.record_evaluation(e);
    }
    store_.finish_attempt(old_attempt_, {store::Status::kDone, "turns", std::nullopt});
    new_run_ = store_.begin_run({"bench", "openai:gpt-test", {{"rejudge_of", old_run_}}});
  }

  // Today's judge: A is correct, B wrong; `interrupt_at`: the call (1-based) Ctrl-C ends.
  Rejudger::Judge judge(int interrupt_at = 0) {
    return [this, interrupt_at](const std::string& problem, const std::filesystem::path& kernel,
                                const Rejudger::Status&) {
      ++calls_;
      if (calls_ == interrupt_at) throw Interrupted{};
      results::EvalResult r;
      r.problem = problem;
      r.world_size = 2;
      const bool is_a = read(kernel).find("kernel A") != std::string::npos;
      r.verdict = is_a ? results::Verdict::kCorrect : results::Verdict::kIncorrect;
      r.message = is_a ? "correct now" : "wrong now";
      return r;
    };
  }
  static std::string read(const std::filesystem::path& p) {
    std::ifstream in(p);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  std::map<AttemptKey, store::AttemptSummary> judgeable() {
    return judgeable_attempts(store_.attempts_of_run(old_run_));
  }

  test::TempDir dir_{"mgk-rejudge"};
  store::Store store_;
  int64_t old_run_ = 0, old_attempt_ = 0, new_run_ = 0;
  int calls_ = 0;
};

TEST_F(Rejudge, CopiesTheAttemptAndJudgesEachJudgedTurnAnewAKernelSentTwiceOnce) {
  Rejudger r(store_, new_run_, judgeable(), judge(), false, nullptr);
  const int64_t id = r.run({{"collectives/all_gather", 0}, std::nullopt}, nullptr);
  EXPECT_EQ(calls_, 2) << "A and B, A's second sending not judged again";

  const auto copy = store_.attempt(id);
  ASSERT_TRUE(copy);
  EXPECT_EQ(copy->run_id, new_run_);
  EXPECT_EQ(copy->status, store::Status::kDone);
  EXPECT_EQ(copy->exit_reason, "turns");
  EXPECT_EQ(copy->config["rejudge_of_attempt"], old_attempt_);
  EXPECT_EQ(copy->config["compile_only"], false) << "judged for real, whatever the old run did";
  EXPECT_EQ(copy->turns, 3);
  EXPECT_EQ(copy->tokens_in, 300) << "what the kernels cost to write";
  ASSERT_TRUE(copy->cost_usd);
  EXPECT_DOUBLE_EQ(*copy->cost_usd, 0.75);
  EXPECT_EQ(store_.turns(id)[2].reply, "reply 2");

  const auto evals = store_.evaluations_of_attempt(id);
  ASSERT_EQ(evals.size(), 3u);
  EXPECT_EQ(evals[0].verdict, "correct");
  EXPECT_EQ(evals[1].verdict, "incorrect");
  EXPECT_EQ(evals[2].verdict, "correct");
  EXPECT_EQ(evals[2].turn_index, 2);
  ASSERT_TRUE(copy->best_kernel_hash);
  EXPECT_EQ(*store_.kernel_source(*copy->best_kernel_hash), "// kernel A\n");
  // The old attempt is untouched.
  EXPECT_EQ(store_.evaluations_of_attempt(old_attempt_)[0].verdict, "compile_error");
}

TEST_F(Rejudge, ARejudgeCutOffByCtrlCIsFinishedByTheNextWithoutJudgingAgainWhatItHad) {
  {
    Rejudger r(store_, new_run_, judgeable(), judge(/*interrupt_at=*/2), false, nullptr);
    const int64_t id = r.run({{"collectives/all_gather", 0}, std::nullopt}, nullptr);
    EXPECT_EQ(store_.attempt(id)->status, store::Status::kInterrupted);
    EXPECT_EQ(store_.evaluations_of_attempt(id).size(), 1u) << "B's cut-off evaluation says nothing: not stored";
  }
  const WorkList work = remaining_work({{"collectives/all_gather", 0}}, store_.attempts_of_run(new_run_), false);
  ASSERT_EQ(work.to_run.size(), 1u);
  ASSERT_TRUE(work.to_run[0].continue_attempt);
  calls_ = 0;
  Rejudger again(store_, new_run_, judgeable(), judge(), false, nullptr);
  const int64_t id = again.run(work.to_run[0], nullptr);
  EXPECT_EQ(id, *work.to_run[0].continue_attempt);
  EXPECT_EQ(calls_, 1) << "only B; A was judged, and is judged once";
  EXPECT_EQ(store_.attempt(id)->status, store::Status::kDone);
  EXPECT_EQ(store_.turns(id).size(), 3u) << "turns copied once";
  const auto evals = store_.evaluations_of_attempt(id);
  ASSERT_EQ(evals.size(), 3u);
  EXPECT_EQ(evals[1].verdict, "incorrect");
  EXPECT_EQ(evals[2].verdict, "correct");
}

TEST_F(Rejudge, OnlyFinishedAttemptsAreJudgedTheNewestOfAKey) {
  const int64_t unfinished = store_.begin_attempt(
      {old_run_, "collectives/broadcast", "openai:gpt-test", "refine", "v1", 0, 2, nlohmann::json::object()});
  const auto j = judgeable();
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j.begin()->second.id, old_attempt_);
  EXPECT_FALSE(j.count({"collectives/broadcast", 0})) << "attempt " << unfinished << " is still running";
}

}  // namespace
}  // namespace mgk::bench_run
