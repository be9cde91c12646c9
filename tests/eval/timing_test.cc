#include "eval/timing.h"

#include <gtest/gtest.h>

namespace mgk::eval {
namespace {

using results::Timing;

TEST(Timing, IterationTimeIsTheSlowestRank) {
  // Rank 1 is slow on iteration 0, rank 0 on iteration 2.
  std::vector<std::vector<double>> per_rank = {{10, 10, 30, 10, 10}, {20, 11, 12, 10, 13}};
  Timing t = summarize(per_rank);
  EXPECT_EQ(t.iterations, 5);
  // max per iteration: 20, 11, 30, 10, 13 -> median 13
  EXPECT_DOUBLE_EQ(t.median_us, 13);
  EXPECT_DOUBLE_EQ(t.min_us, 10);
  ASSERT_EQ(t.per_rank_median_us.size(), 2u);
  EXPECT_DOUBLE_EQ(t.per_rank_median_us[0], 10);
  EXPECT_DOUBLE_EQ(t.per_rank_median_us[1], 12);
}

TEST(Timing, QuantilesInterpolate) {
  std::vector<double> v = {4, 1, 3, 2};
  EXPECT_DOUBLE_EQ(quantile(v, 0), 1);
  EXPECT_DOUBLE_EQ(quantile(v, 1), 4);
  EXPECT_DOUBLE_EQ(quantile(v, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(quantile({}, 0.5), 0);
}

TEST(Roofline, TheLargestTermBinds) {
  Peaks p;
  p.hbm_bytes_per_s = 4e12;
  p.flops_per_s = 800e12;
  p.link_bytes_per_s = 400e9;
  problems::ResolvedCost c{1e9, 8e9, 1e9};  // 1.25 us flops, 2000 us hbm, 2500 us link
  RooflinePoint r = roofline(c, p);
  EXPECT_EQ(r.bound, "link");
  EXPECT_NEAR(r.us, 2500, 1e-9);
  c.link_bytes = 0;
  r = roofline(c, p);
  EXPECT_EQ(r.bound, "hbm");
  EXPECT_NEAR(r.us, 2000, 1e-9);
  EXPECT_EQ(roofline(c, Peaks{}).us, 0);  // no calibration: no bound
}

TEST(Peaks, TakeTheSlowestGpuAndLink) {
  auto c = nlohmann::json::parse(R"json({"gpus": [{"hbm_bytes_per_s": 4.2e12, "bf16_flops_per_s": 7.9e14},
                                               {"hbm_bytes_per_s": 4.1e12, "bf16_flops_per_s": 7.7e14}],
                                     "pairs": [{"peer_access": true, "bytes_per_s": 3.9e11},
                                               {"peer_access": true, "bytes_per_s": 3.8e11},
                                               {"peer_access": false}]})json");
  Peaks p = Peaks::from_calibration(c);
  EXPECT_DOUBLE_EQ(p.hbm_bytes_per_s, 4.1e12);
  EXPECT_DOUBLE_EQ(p.flops_per_s, 7.7e14);
  EXPECT_DOUBLE_EQ(p.link_bytes_per_s, 3.8e11);
}

}  // namespace
}  // namespace mgk::eval

namespace mgk::eval {
namespace {

Timing median_of(double us) {
  Timing t;
  t.median_us = us;
  return t;
}

// Rows measured on the H200 at one rank (bench/RESULTS.md, fourteenth session): the plain
// all-reduce's reported median, the outside clock's, the probes' spread, from five runs. Every
// honest one must stay credible under the slack; the forged one the outside clock can see
// must not.
struct Row {
  const char* what;
  double candidate, outside, spread;
};
constexpr Row kHonest[] = {
    {"tiny", 8.30, 4.10, 17.9},      {"small", 9.07, 5.85, 17.9},     {"medium", 27.41, 28.70, 17.9},
    {"large", 293.38, 325.23, 17.9}, {"odd", 8.98, 0.51, 17.9},       {"tiny", 8.16, 11.10, 6.3},
    {"small", 9.14, 13.19, 6.3},     {"medium", 27.39, 38.53, 6.3},   {"large", 293.26, 366.70, 6.3},
    {"odd", 8.91, 22.75, 6.3},       {"tiny", 8.13, 11.92, 26.7},     {"small", 9.09, 18.18, 26.7},
    {"medium", 27.42, 50.99, 26.7},  {"large", 293.26, 363.33, 26.7}, {"odd", 9.09, 13.60, 26.7},
    {"tiny", 8.13, 21.93, 23.3},     {"small", 9.15, 10.92, 23.3},    {"medium", 27.65, 43.38, 23.3},
    {"large", 293.57, 377.61, 23.3}, {"odd", 8.70, 6.77, 23.3},       {"tiny", 8.14, 32.02, 7.8},
    {"small", 8.86, 37.25, 7.8},     {"medium", 27.58, 70.14, 7.8},   {"large", 293.06, 377.63, 7.8},
    {"odd", 9.07, 13.35, 7.8},
};
constexpr Row kForged[] = {
    {"large, cudaEventElapsedTime's GOT slot reporting a third", 97.77, 339.81, 26.0},
};

TEST(Credibility, TheHonestTimesMeasuredOnTheH200AreCredible) {
  for (const Row& r : kHonest) {
    const Credibility c = judge_credibility(median_of(r.candidate), median_of(2.9), median_of(r.outside), r.spread);
    EXPECT_TRUE(c.credible) << r.what << " " << r.candidate << " vs outside " << r.outside << ": " << c.why;
  }
}

TEST(Credibility, AForgedTimeTheOutsideClockSeesIsNot) {
  for (const Row& r : kForged) {
    const Credibility c = judge_credibility(median_of(r.candidate), median_of(2.9), median_of(r.outside), r.spread);
    EXPECT_FALSE(c.credible) << r.what;
    EXPECT_NE(c.why.find("the harness's own clock saw at least 340 us"), std::string::npos) << c.why;
  }
}

TEST(Credibility, UnderTheFloorIsNeverCredible) {
  const Credibility c = judge_credibility(median_of(1.25), median_of(2.9), std::nullopt, 0);
  EXPECT_FALSE(c.credible);
  EXPECT_EQ(c.why, "the measured time (1.25 us) is below the timing floor (an empty kernel, 2.90 us)");
  EXPECT_TRUE(judge_credibility(median_of(3.0), median_of(2.9), std::nullopt, 0).credible);
}

}  // namespace
}  // namespace mgk::eval
