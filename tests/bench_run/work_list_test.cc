// What a run is made of and what of it is left, decided from the store's attempts alone.
#include "bench_run/work_list.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "common/error.h"

namespace mgk::bench_run {
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

TEST(WorkList, ShardsPartitionThePlanEachWithAMixOfProblems) {
  const auto plan = planned_attempts({"a/x", "b/y", "c/z"}, 2);
  std::vector<AttemptKey> all;
  for (int k = 0; k < 4; ++k)
    for (const auto& key : shard_of(plan, k, 4)) all.push_back(key);
  std::sort(all.begin(), all.end());
  auto sorted = plan;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(all, sorted) << "every attempt in exactly one shard";
  std::vector<AttemptKey> first = {{"a/x", 0}, {"b/y", 1}};
  EXPECT_EQ(shard_of(plan, 0, 4), first);
  EXPECT_EQ(shard_of(plan, 5, 8).size(), 1u);
  EXPECT_TRUE(shard_of(plan, 7, 8).empty()) << "more shards than attempts: some are empty";
  EXPECT_THROW(shard_of(plan, 3, 3), UsageError);
  EXPECT_THROW(shard_of(plan, -1, 3), UsageError);
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
}  // namespace mgk::bench_run
