// The local executor: every item once, at most `jobs` at a time, the budget stopping new
// work, errors reported and (several in a row) stopping the run, Ctrl-C stopping it.
#include "bench/local_executor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>

#include "common/error.h"

namespace mgk::bench {
namespace {

std::vector<WorkItem> items(int n) {
  std::vector<WorkItem> v;
  for (int i = 0; i < n; ++i) v.push_back({{"p/x", i}, std::nullopt});
  return v;
}

TEST(LocalExecutor, RunsEveryItemOnceWithAtMostJobsAtATime) {
  LocalExecutor ex({3, 0, 0, 5}, nullptr);
  std::mutex mu;
  std::multiset<int> seen;
  std::atomic<int> running{0}, most{0};
  StopReason r = ex.run(items(10), [&](const WorkItem& it, int worker) {
    EXPECT_GE(worker, 0);
    EXPECT_LT(worker, 3);
    int now = ++running;
    int m = most;
    while (now > m && !most.compare_exchange_weak(m, now)) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    --running;
    std::lock_guard lock(mu);
    seen.insert(it.key.sample);
  });
  EXPECT_EQ(r, StopReason::kFinished);
  EXPECT_EQ(seen.size(), 10u);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(seen.count(i), 1u);
  EXPECT_LE(most.load(), 3);
  EXPECT_GE(most.load(), 2) << "items ran one after the other";
}

TEST(LocalExecutor, TheBudgetStopsNewWorkAndRaisesTheStopFlag) {
  LocalExecutor ex({1, 1.0, 0.25, 5}, nullptr);  // $0.25 spent before, $1 allowed
  int ran = 0;
  StopReason r = ex.run(items(10), [&](const WorkItem&, int) {
    ++ran;
    ex.add_spend(0.3);
  });
  EXPECT_EQ(r, StopReason::kBudget);
  EXPECT_EQ(ran, 3);  // 0.55, 0.85, 1.15: the third crossed it
  EXPECT_TRUE(ex.stop_flag());
  EXPECT_DOUBLE_EQ(ex.spent(), 0.25 + 3 * 0.3);
}

TEST(LocalExecutor, ARunWhoseBudgetIsAlreadySpentStartsNothing) {
  LocalExecutor ex({2, 1.0, 1.5, 5}, nullptr);
  int ran = 0;
  EXPECT_EQ(ex.run(items(4), [&](const WorkItem&, int) { ++ran; }), StopReason::kBudget);
  EXPECT_EQ(ran, 0);
}

TEST(LocalExecutor, AnErrorIsReportedAndTheOthersGoOnButManyInARowStop) {
  LocalExecutor ex({1, 0, 0, 3}, nullptr);
  std::vector<std::string> errors;
  ex.on_error = [&](const WorkItem& it, const std::string& e) { errors.push_back(std::to_string(it.key.sample) + ": " + e); };
  int ok = 0;
  StopReason r = ex.run(items(10), [&](const WorkItem& it, int) {
    if (it.key.sample == 1 || it.key.sample >= 4) throw Error("the judge broke");
    ++ok;
  });
  EXPECT_EQ(r, StopReason::kErrors);
  EXPECT_EQ(ok, 3);  // 0, 2, 3
  EXPECT_EQ(errors, (std::vector<std::string>{"1: the judge broke", "4: the judge broke", "5: the judge broke",
                                              "6: the judge broke"}));
}

TEST(LocalExecutor, CtrlCStopsTakingWork) {
  std::atomic<bool> interrupt{false};
  LocalExecutor ex({2, 0, 0, 5}, &interrupt);
  std::atomic<int> ran{0};
  StopReason r = ex.run(items(20), [&](const WorkItem&, int) {
    if (++ran == 3) interrupt = true;
  });
  EXPECT_EQ(r, StopReason::kInterrupted);
  EXPECT_LE(ran.load(), 4);
}

}  // namespace
}  // namespace mgk::bench
