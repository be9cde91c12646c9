// Which timed calls are judged: a fresh unpredictable subset per block, and the odds that a
// kernel skipping work in calls it guesses unchecked escapes.
#include "eval/timed_checks.h"

#include <gtest/gtest.h>

#include <set>

namespace mgk::eval {
namespace {

TEST(TimedChecks, DrawsDistinctSortedIndicesInRange) {
  std::mt19937_64 rng(7);
  for (int calls : {1, 3, 23, 30}) {
    for (int count : {0, 1, 3, 40}) {
      auto v = draw_checked_calls(calls, count, rng);
      EXPECT_EQ(int(v.size()), std::min(calls, count));
      EXPECT_TRUE(std::is_sorted(v.begin(), v.end()));
      EXPECT_EQ(std::set<int>(v.begin(), v.end()).size(), v.size());
      for (int i : v) EXPECT_TRUE(i >= 0 && i < calls);
    }
  }
}

TEST(TimedChecks, EveryCallIsAsLikelyAndBlocksDiffer) {
  std::mt19937_64 rng(11);
  std::vector<int> hits(23, 0);
  std::set<std::vector<int>> distinct;
  const int draws = 23000;
  for (int d = 0; d < draws; ++d) {
    auto v = draw_checked_calls(23, 3, rng);
    distinct.insert(v);
    for (int i : v) ++hits[i];
  }
  // Each index is drawn with probability 3/23: 3000 expected, within a few standard deviations.
  for (int h : hits) EXPECT_NEAR(h, 3000, 250);
  EXPECT_GT(distinct.size(), 1000u) << "the subset must change from block to block";
}

// The old protocol checked only the last call of each block. A kernel that does the work
// only there (tests/bad_candidates/skips_unchecked.cu) has 22 bad calls in a block of 23:
// three random checks miss them all with probability 0, exactly.
TEST(TimedChecks, ThePredictedUncheckedPatternCannotEscape) {
  EXPECT_EQ(miss_probability(23, 22, 3), 0.0);
  std::mt19937_64 rng(3);
  int escaped = 0;
  for (int block = 0; block < 10000; ++block) {
    auto v = draw_checked_calls(23, 3, rng);
    bool caught = false;
    for (int i : v) caught |= i != 22;  // every call but the last skipped its work
    escaped += !caught;
  }
  EXPECT_EQ(escaped, 0);
}

TEST(TimedChecks, MissProbabilityIsTheHypergeometricTail) {
  EXPECT_DOUBLE_EQ(miss_probability(23, 0, 3), 1.0);
  EXPECT_DOUBLE_EQ(miss_probability(4, 1, 1), 0.75);
  EXPECT_DOUBLE_EQ(miss_probability(4, 2, 2), 1.0 / 6.0);  // C(2,2)/C(4,2)
  EXPECT_DOUBLE_EQ(miss_probability(3, 1, 5), 0.0);        // all checked
  // One bad call in 23, three checks a block, five blocks: escapes with (20/23)^5.
  const double per_block = miss_probability(23, 1, 3);
  EXPECT_NEAR(per_block, 20.0 / 23.0, 1e-12);
}

TEST(TimedChecks, SimulatedOddsMatchTheFormula) {
  std::mt19937_64 rng(5);
  const int calls = 23, count = 3;
  const std::set<int> bad = {2, 9, 17, 20};  // a kernel wrong in these four calls
  int missed = 0;
  const int trials = 200000;
  for (int t = 0; t < trials; ++t) {
    bool caught = false;
    for (int i : draw_checked_calls(calls, count, rng)) caught |= bad.count(i) > 0;
    missed += !caught;
  }
  EXPECT_NEAR(double(missed) / trials, miss_probability(calls, 4, count), 0.005);
}

}  // namespace
}  // namespace mgk::eval
