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

// The error ratio the evaluator reports (how much of its bound a result used) agrees with
// the pass/fail judgement: at most 1 exactly when the element passes.
TEST(Tolerance, TheErrorRatioIsTheErrorOverTheBoundAndAgreesWithThePassMark) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  CheckSpec a{CheckKind::kAllclose, 1, 0, 1e-3, 1e-2};  // allowed at 1.0: 0.011
  EXPECT_NEAR(error_ratio(a, 1.0055, 1.0, 0), 0.5, 1e-9);
  EXPECT_NEAR(error_ratio(a, 1.022, 1.0, 0), 2.0, 1e-9);
  EXPECT_EQ(error_ratio(a, 1.0, 1.0, 0), 0);
  EXPECT_GE(error_ratio(a, nan, 1.0, 0), 1e30);
  EXPECT_GE(error_ratio(a, inf, 1.0, 0), 1e30);
  EXPECT_EQ(error_ratio(a, inf, inf, 0), 0);
  CheckSpec r{CheckKind::kRounding, 4, 1.0 / 256, 0, 0};  // allowed: 4 * 2^-8 * scale
  EXPECT_NEAR(error_ratio(r, 10.0 + 0.125, 10.0, 16.0), 0.5, 1e-6);
  EXPECT_EQ(error_ratio(CheckSpec{CheckKind::kExact, 1, 0, 0, 0}, 2.0, 1.0, 0), 0) << "exact outputs have no ratio";
  for (double got : {0.99, 1.004, 1.0109, 1.0111, 1.5, -3.0})
    EXPECT_EQ(error_ratio(a, got, 1.0, 0) <= 1, float_element_ok(a, got, 1.0, 0)) << got;
}

}  // namespace
}  // namespace mgk::harness
