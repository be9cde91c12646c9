// What a run is made of and what of it is left, decided from the store's attempts alone.
#include "bench/work_list.h"

#include <gtest/gtest.h>

namespace mgk::bench {
namespace {

store::AttemptSummary stored(int64_t id, const std::string& problem, int sample, store::Status status) {
  store::AttemptSummary a;
  a.id = id;
  a.problem = problem;
  a.sample = sample;
  a.status = status;
  return a;
}

TEST(WorkList, PlansEveryProblemsFirstSampleBeforeAnySecondOne) {
  auto plan = planned_attempts({"a/x", "b/y"}, 3);
  std::vector<AttemptKey> expected = {{"a/x", 0}, {"b/y", 0}, {"a/x", 1}, {"b/y", 1}, {"a/x", 2}, {"b/y", 2}};
  EXPECT_EQ(plan, expected);
  EXPECT_TRUE(planned_attempts({"a/x"}, 0).empty());
}

TEST(WorkList, SkipsWhatFinishedContinuesWhatWasCutOffStartsTheRest) {
  auto plan = planned_attempts({"a/x", "b/y"}, 2);
  std::vector<store::AttemptSummary> in_store = {
      stored(1, "a/x", 0, store::Status::kDone),
      stored(2, "b/y", 0, store::Status::kRunning),       // its process was killed
      stored(3, "a/x", 1, store::Status::kInterrupted),   // Ctrl-C or the budget
      stored(4, "z/other", 0, store::Status::kRunning)};  // not in this plan: left alone
  WorkList w = remaining_work(plan, in_store, false);
  EXPECT_EQ(w.finished, std::vector<int64_t>{1});
  ASSERT_EQ(w.to_run.size(), 3u);
  EXPECT_EQ(w.to_run[0].key, (AttemptKey{"b/y", 0}));
  EXPECT_EQ(w.to_run[0].continue_attempt, 2);
  EXPECT_EQ(w.to_run[1].key, (AttemptKey{"a/x", 1}));
  EXPECT_EQ(w.to_run[1].continue_attempt, 3);
  EXPECT_EQ(w.to_run[2].key, (AttemptKey{"b/y", 1}));
  EXPECT_FALSE(w.to_run[2].continue_attempt);
}

TEST(WorkList, FailedAttemptsCountAsFinishedUnlessRetried) {
  auto plan = planned_attempts({"a/x"}, 1);
  std::vector<store::AttemptSummary> in_store = {stored(7, "a/x", 0, store::Status::kFailed)};
  EXPECT_EQ(remaining_work(plan, in_store, false).finished, std::vector<int64_t>{7});
  WorkList retry = remaining_work(plan, in_store, true);
  ASSERT_EQ(retry.to_run.size(), 1u);
  EXPECT_EQ(retry.to_run[0].continue_attempt, 7);
}

TEST(WorkList, WhereAKeyWasStoredTwiceTheNewerAttemptDecides) {
  auto plan = planned_attempts({"a/x"}, 1);
  std::vector<store::AttemptSummary> in_store = {stored(9, "a/x", 0, store::Status::kRunning),
                                                 stored(5, "a/x", 0, store::Status::kDone)};
  WorkList w = remaining_work(plan, in_store, false);
  ASSERT_EQ(w.to_run.size(), 1u);
  EXPECT_EQ(w.to_run[0].continue_attempt, 9);
}

}  // namespace
}  // namespace mgk::bench
