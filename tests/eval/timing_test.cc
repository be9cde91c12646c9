#include "eval/timing.h"

#include <gtest/gtest.h>

namespace mgk::eval {
namespace {

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
