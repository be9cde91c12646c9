// The per-element rule the GPU check kernel applies (sandbox/harness/tolerance.h).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "../../sandbox/harness/tolerance.h"

namespace mgk::harness {
namespace {

constexpr double kBf16U = 0x1p-8;

double bf16_round(double v) {  // round to nearest even, 8 significant bits
  if (v == 0) return 0;
  int e;
  std::frexp(v, &e);
  double q = std::ldexp(1.0, e - 8);
  return std::nearbyint(v / q) * q;
}

TEST(Tolerance, NanNeverPasses) {
  for (auto kind : {CheckKind::kExact, CheckKind::kRounding, CheckKind::kAllclose}) {
    CheckSpec s{kind, 100, kBf16U, 1, 1};
    EXPECT_FALSE(float_element_ok(s, std::nan(""), 1.0, 1.0));
  }
}

TEST(Tolerance, ExactIsBitForBitIncludingSignOfZero) {
  CheckSpec s{CheckKind::kExact};
  EXPECT_TRUE(float_element_ok(s, 1.5, 1.5, 0));
  EXPECT_FALSE(float_element_ok(s, 1.5 + 1e-12, 1.5, 0));
  EXPECT_FALSE(float_element_ok(s, -0.0, 0.0, 0));
}

// Every summation order of W bf16 terms, rounding each partial to bf16, stays inside the
// bound with factor W + 1; a result missing one term, zeros and constants do not.
TEST(Tolerance, RoundingBoundAcceptsEveryOrderAndRejectsWrongSums) {
  for (int w : {2, 4, 8}) {
    CheckSpec s{CheckKind::kRounding, double(w + 1), kBf16U};
    unsigned seed = 12345;
    auto rnd = [&] {
      seed = seed * 1103515245u + 12345u;
      return bf16_round((double((seed >> 8) & 0xffff) / 32768.0 - 1.0) * 3);
    };
    int rejected_missing = 0, rejected_zero = 0, trials = 2000;
    for (int t = 0; t < trials; ++t) {
      std::vector<double> x(w);
      double exact = 0, mag = 0;
      for (auto& v : x) v = rnd(), exact += v, mag += std::fabs(v);
      // forward, backward and pairwise orders, each partial rounded to bf16
      double fwd = 0, bwd = 0;
      for (int i = 0; i < w; ++i) fwd = bf16_round(fwd + x[i]);
      for (int i = w - 1; i >= 0; --i) bwd = bf16_round(bwd + x[i]);
      std::vector<double> p = x;
      while (p.size() > 1) {
        std::vector<double> q;
        for (size_t i = 0; i + 1 < p.size(); i += 2) q.push_back(bf16_round(p[i] + p[i + 1]));
        if (p.size() % 2) q.push_back(p.back());
        p = q;
      }
      EXPECT_TRUE(float_element_ok(s, fwd, exact, mag));
      EXPECT_TRUE(float_element_ok(s, bwd, exact, mag));
      EXPECT_TRUE(float_element_ok(s, p[0], exact, mag));
      EXPECT_TRUE(float_element_ok(s, bf16_round(exact), exact, mag));  // fp32 accumulate, one rounding
      if (!float_element_ok(s, bf16_round(exact - x[0]), exact, mag)) ++rejected_missing;
      if (!float_element_ok(s, 0.0, exact, mag)) ++rejected_zero;
    }
    // Per element, a sum missing a small term can fall inside the bound; a kernel fails when
    // any of its ~10^5+ elements does, so rejecting most single elements is plenty.
    EXPECT_GT(rejected_missing, trials * 8 / 10) << "W=" << w;
    EXPECT_GT(rejected_zero, trials * 8 / 10) << "W=" << w;
  }
}

TEST(Tolerance, AllcloseUsesAtolPlusRtol) {
  CheckSpec s{CheckKind::kAllclose, 1, 0, 1e-3, 1e-2};
  EXPECT_TRUE(float_element_ok(s, 1.0105, 1.0, 0));
  EXPECT_FALSE(float_element_ok(s, 1.02, 1.0, 0));
  EXPECT_TRUE(float_element_ok(s, std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity(), 0));
  EXPECT_FALSE(float_element_ok(s, std::numeric_limits<double>::infinity(), 1e300, 0));
}

}  // namespace
}  // namespace mgk::harness
