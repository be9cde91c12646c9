// The local executor: every item once, at most `jobs` at a time, the budget stopping new
// work, errors reported and (several in a row) stopping the run, Ctrl-C stopping it.
#include "bench_run/local_executor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>

#include "common/error.h"

namespace mgk::bench_run {
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
    if (!ex.hold(0.3)) return;  // the attempt ends before its call
    ex.settle(0.3, 0.3);
  });
  EXPECT_EQ(r, StopReason::kBudget);
  // 0.55, 0.85; the third call's worst case (1.15) would cross it: not made, the run stops.
  EXPECT_EQ(ran, 3) << "the third item started, and ended before its call";
  EXPECT_TRUE(ex.stop_flag());
  EXPECT_DOUBLE_EQ(ex.spent(), 0.25 + 2 * 0.3);
}

// Calls in flight together hold their worst cases: none is made that could take the run past
// its budget, one that does not fit waits for the others to settle (they cost less than they
// held), and only a call that cannot fit with nothing in flight stops the run.
TEST(LocalExecutor, CallsInFlightHoldTheirWorstCaseAndNoneCrossesTheBudget) {
  LocalExecutor ex({2, 1.0, 0, 5}, nullptr);
  ASSERT_TRUE(ex.hold(0.6));
  std::atomic<bool> second{false};
  std::thread t([&] { second = ex.hold(0.6); });  // 0.6 + 0.6 > 1: waits
  std::this_thread::sleep_for(std::chrono::milliseconds(250));
  EXPECT_FALSE(second.load()) << "held while the first is in flight";
  ex.settle(0.6, 0.1);  // the first cost $0.10: now 0.1 + 0.6 fits
  t.join();
  EXPECT_TRUE(second.load());
  EXPECT_FALSE(ex.stop_flag());
  ex.settle(0.6, 0.2);
  EXPECT_DOUBLE_EQ(ex.spent(), 0.3);
  EXPECT_FALSE(ex.hold(0.8)) << "0.3 + 0.8 > 1 with nothing in flight";
  EXPECT_TRUE(ex.stop_flag());
  EXPECT_EQ(ex.run(items(2), [](const WorkItem&, int) {}), StopReason::kBudget);
}

TEST(LocalExecutor, CtrlCWakesACallWaitingForTheBudget) {
  std::atomic<bool> interrupt{false};
  LocalExecutor ex({2, 1.0, 0, 5}, &interrupt);
  ASSERT_TRUE(ex.hold(0.9));
  std::atomic<int> second{-1};
  std::thread t([&] { second = ex.hold(0.5) ? 1 : 0; });
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  interrupt = true;
  t.join();
  EXPECT_EQ(second.load(), 0);
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
}  // namespace mgk::bench_run
