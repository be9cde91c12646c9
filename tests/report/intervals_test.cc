// The bootstrap interval of pass@k / fast_p@k: it holds the estimate, is a point where
// nothing varies, narrows with more problems, repeats itself, and covers the true rate about
// as often as it says, on simulated benchmarks.
#include <gtest/gtest.h>

#include <iostream>
#include <random>

#include "report/intervals.h"
#include "report/metrics.h"

namespace mgk::report {
namespace {

double mean_at_k(const std::vector<std::pair<int, int>>& problems, int k) {
  double sum = 0;
  for (auto [n, c] : problems) sum += *unbiased_at_k(n, c, k);
  return sum / double(problems.size());
}

TEST(Intervals, NothingToResampleIsNoInterval) { EXPECT_FALSE(bootstrap_at_k({}, 1)); }

TEST(Intervals, AllOrNothingIsAPoint) {
  auto all = bootstrap_at_k({{4, 4}, {4, 4}, {4, 4}}, 1);
  ASSERT_TRUE(all);
  EXPECT_EQ(all->low, 1.0);
  EXPECT_EQ(all->high, 1.0);
  auto none = bootstrap_at_k({{4, 0}, {2, 0}}, 2);
  ASSERT_TRUE(none);
  EXPECT_EQ(none->high, 0.0);
}

TEST(Intervals, HoldTheEstimateAndRepeatThemselves) {
  const std::vector<std::pair<int, int>> run = {{4, 1}, {4, 3}, {4, 0}, {4, 4}, {4, 2}, {4, 2}, {4, 1}, {4, 3}};
  for (int k : {1, 2, 4}) {
    auto ci = bootstrap_at_k(run, k);
    ASSERT_TRUE(ci);
    const double v = mean_at_k(run, k);
    EXPECT_LT(ci->low, v) << k;
    EXPECT_GT(ci->high, v) << k;
    auto again = bootstrap_at_k(run, k);
    EXPECT_EQ(again->low, ci->low);
    EXPECT_EQ(again->high, ci->high);
  }
}

TEST(Intervals, MoreProblemsNarrowIt) {
  std::vector<std::pair<int, int>> few, many;
  for (int i = 0; i < 5; ++i) few.push_back({4, i % 5});
  for (int r = 0; r < 12; ++r)
    for (int i = 0; i < 5; ++i) many.push_back({4, i % 5});
  auto a = bootstrap_at_k(few, 1), b = bootstrap_at_k(many, 1);
  EXPECT_LT(b->high - b->low, (a->high - a->low) * 0.6);
}

// Simulated suites: 30 problems drawn from a population whose solve rates are uniform on
// [0, 0.8] (mean 0.4), 4 samples each. The interval for pass@1, which resamples problems and
// samples alike, should hold the population's mean about 95% of the time.
TEST(Intervals, CoverTheTrueRateAboutAsOftenAsTheySay) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> rate(0.0, 0.8);
  int covered = 0;
  const int trials = 300;
  for (int t = 0; t < trials; ++t) {
    const double truth = 0.4;
    std::vector<std::pair<int, int>> run;
    for (int p = 0; p < 30; ++p) run.push_back({4, std::binomial_distribution<int>(4, rate(rng))(rng)});
    auto ci = bootstrap_at_k(run, 1, 500);
    covered += ci->low <= truth && truth <= ci->high;
  }
  // A percentile bootstrap with 30 problems runs a little under its nominal level.
  EXPECT_GE(covered, int(0.88 * trials)) << covered << " of " << trials;
  std::cout << "covered the truth in " << covered << " of " << trials << " simulated suites\n";
  EXPECT_LE(covered, int(0.99 * trials)) << covered << " of " << trials << ": too wide to be useful";
}

}  // namespace
}  // namespace mgk::report
