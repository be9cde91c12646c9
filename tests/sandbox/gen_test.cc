// The special rows of mgk_input_gen (mgk/gen.cuh, compiled here by the host compiler, as the
// harness's fill kernel and every oracle run it on the device): every zero_every-th row of
// `row` elements exactly +0, every tiny_every-th (half a period on) the ordinary values times
// `tiny`, every massive_every-th (a period on, less one) times `massive`, the same rows on
// every rank, moved by a phase that follows the seed.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <set>
#include <vector>

#include "mgk/dtype_table.h"
#include "mgk/gen.cuh"

namespace mgk {
namespace {

mgk_input_gen plain_gen(uint64_t seed, mgk_dtype t = MGK_BF16) {
  mgk_input_gen g{};
  g.seed = seed, g.dist = MGK_DIST_NORMAL, g.a = 0, g.b = 1, g.dtype = t;
  return g;
}

mgk_input_gen special_gen(uint64_t seed, int64_t row, int64_t zero_every, int64_t tiny_every, double tiny,
                          mgk_dtype t = MGK_BF16) {
  mgk_input_gen g = plain_gen(seed, t);
  g.row = row, g.zero_every = zero_every, g.tiny_every = tiny_every, g.tiny = tiny;
  return g;
}

TEST(Gen, SpecialRowsAreZeroOrScaledWholeAndTheSameOnEveryRank) {
  const int64_t row = 10, rows = 64;
  for (uint64_t seed : {1ull, 2ull, 0xdeadbeefull}) {
    const mgk_input_gen plain = plain_gen(seed), g = special_gen(seed, row, 8, 8, 0x1p-10);
    int zero_rows = 0, tiny_rows = 0;
    for (int64_t q = 0; q < rows; ++q) {
      const int kind = special_row(g, q * row);
      for (int64_t j = 0; j < row; ++j) EXPECT_EQ(special_row(g, q * row + j), kind) << q << " " << j;  // whole rows
      zero_rows += kind == kZeroRow, tiny_rows += kind == kTinyRow;
      for (int rank : {0, 1, 7}) {
        for (int64_t j = 0; j < row; ++j) {
          const int64_t i = q * row + j;
          const double v = gen_value(g, rank, i), ordinary = gen_value(plain, rank, i);
          if (kind == kZeroRow) {
            EXPECT_EQ(v, 0.0);
            EXPECT_FALSE(std::signbit(v));  // +0: exact checks compare the sign of zero
          } else if (kind == kTinyRow) {
            EXPECT_EQ(v, ordinary * 0x1p-10);  // a power of two: the bf16 rounding commutes
          } else {
            EXPECT_EQ(v, ordinary);
          }
        }
      }
    }
    EXPECT_EQ(zero_rows, rows / 8);
    EXPECT_EQ(tiny_rows, rows / 8);
    // The tiny rows sit half a period after the zero rows.
    for (int64_t q = 0; q < rows; ++q)
      if (special_row(g, q * row) == kZeroRow && q + 4 < rows) {
        EXPECT_EQ(special_row(g, (q + 4) * row), kTinyRow);
      }
  }
}

TEST(Gen, MassiveRowsAreScaledWholeAndPrecedeTheNextPeriod) {
  const int64_t row = 6, rows = 96;
  for (uint64_t seed : {3ull, 4ull, 0xfeedull}) {
    mgk_input_gen g = special_gen(seed, row, 32, 0, 0);
    g.massive_every = 32, g.massive = 128;
    const mgk_input_gen plain = plain_gen(seed);
    int massive_rows = 0;
    for (int64_t q = 0; q < rows; ++q) {
      const int kind = special_row(g, q * row);
      massive_rows += kind == kMassiveRow;
      // The row before each zero row is massive: a period on, less one.
      if (kind == kZeroRow && q > 0) EXPECT_EQ(special_row(g, (q - 1) * row), kMassiveRow) << q;
      for (int64_t j = 0; j < row; ++j) {
        const int64_t i = q * row + j;
        EXPECT_EQ(special_row(g, i), kind);
        if (kind == kMassiveRow) EXPECT_EQ(gen_value(g, 5, i), gen_value(plain, 5, i) * 128);  // a power of two
      }
    }
    EXPECT_EQ(massive_rows, rows / 32);
  }
}

TEST(Gen, TheSpecialRowsMoveWithTheSeed) {
  std::set<int64_t> first_zero_row;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    const mgk_input_gen g = special_gen(seed, 4, 16, 0, 0);
    for (int64_t q = 0; q < 16; ++q)
      if (special_row(g, q * 4) == kZeroRow) first_zero_row.insert(q);
  }
  EXPECT_EQ(first_zero_row.size(), 16u);  // every offset of the period, over 200 trials' seeds
}

TEST(Gen, SpecialRowsNeedARowLengthAndAPeriod) {
  const mgk_input_gen plain = plain_gen(9);
  for (const mgk_input_gen& g : {special_gen(9, 0, 4, 4, 0.5), special_gen(9, 16, 0, 0, 0.5)})
    for (int64_t i = 0; i < 1024; ++i) {
      EXPECT_EQ(special_row(g, i), kOrdinaryRow);
      EXPECT_EQ(gen_value(g, 2, i), gen_value(plain, 2, i));
    }
  // Zero rows only, or tiny rows only.
  const mgk_input_gen zeros = special_gen(9, 8, 4, 0, 0), tiny = special_gen(9, 8, 0, 4, 0.25);
  int z = 0, t = 0;
  for (int64_t q = 0; q < 64; ++q) z += special_row(zeros, q * 8) == kZeroRow, t += special_row(tiny, q * 8) == kTinyRow;
  EXPECT_EQ(z, 16);
  EXPECT_EQ(t, 16);
}

// What the harness stores for a zero row is +0 in every float dtype, fp8 included, so exact
// checks (which compare the sign of zero) see the same zero the oracle computes.
TEST(Gen, AZeroRowIsStoredAsPositiveZero) {
  for (mgk_dtype t : {MGK_BF16, MGK_F16, MGK_F32, MGK_E4M3, MGK_E5M2}) {
    const mgk_input_gen g = special_gen(5, 4, 2, 0, 0, t);
    unsigned char buf[64] = {};
    std::memset(buf, 0xFF, sizeof buf);
    for (int64_t i = 0; i < 8; ++i)
      if (special_row(g, i) == kZeroRow) {
        store_value(buf, t, i, gen_value(g, 0, i));
        const size_t size = t == MGK_F32 ? 4 : t == MGK_E4M3 || t == MGK_E5M2 ? 1 : 2;
        for (size_t b = 0; b < size; ++b) EXPECT_EQ(buf[i * size + b], 0) << dtype_name(t) << " element " << i;
      }
  }
}

// zipf: integers in [low, high) whose frequencies fall as a power of the offset, with the
// whole range reachable; the draws of one rank differ from another's.
TEST(Gen, ZipfIdsFollowAPowerLawOverTheWholeRange) {
  mgk_input_gen g{};
  g.seed = 11, g.dist = MGK_DIST_ZIPF, g.a = 100, g.b = 100 + 1000, g.exponent = 1.2, g.dtype = MGK_I64;
  const int64_t draws = 200000;
  std::vector<int64_t> count(1000, 0);
  for (int64_t i = 0; i < draws; ++i) {
    const double v = gen_value(g, 3, i);
    ASSERT_EQ(v, std::floor(v));
    ASSERT_GE(v, 100);
    ASSERT_LT(v, 1100);
    ++count[int64_t(v) - 100];
  }
  // P(j) ~ (j + 1)^-s up to the flooring, which shifts mass inside [j, j + 1): compare sums
  // over octaves [2^k - 1, 2^(k+1) - 1), whose probabilities the continuous law gives.
  const double s = g.exponent, top = 1001;
  auto cdf = [&](double x) { return (std::pow(x, 1 - s) - 1) / (std::pow(top, 1 - s) - 1); };  // P(X <= x)
  for (int k = 0; k < 9; ++k) {
    const int64_t lo = (int64_t(1) << k) - 1, hi = (int64_t(1) << (k + 1)) - 1;
    int64_t got = 0;
    for (int64_t j = lo; j < hi; ++j) got += count[j];
    const double want = draws * (cdf(double(hi + 1)) - cdf(double(lo + 1)));
    EXPECT_NEAR(double(got), want, 5 * std::sqrt(want) + 1) << "offsets [" << lo << ", " << hi << ")";
  }
  EXPECT_GT(count[0], 20 * count[100]) << "a hot head";
  EXPECT_GT(count[999], 0) << "the top of the range is reached";
  int differ = 0;
  for (int64_t i = 0; i < 1000; ++i) differ += gen_value(g, 3, i) != gen_value(g, 4, i);
  EXPECT_GT(differ, 500) << "each rank draws its own";
}

TEST(Gen, ZipfOffsetStaysInRangeAtTheEdges) {
  for (double s : {0.5, 1.0, 1.5, 3.0}) {
    EXPECT_EQ(zipf_offset(s, 50, 1e-300), 0);
    EXPECT_EQ(zipf_offset(s, 50, 1.0), 49);
    EXPECT_EQ(zipf_offset(s, 1, 0.7), 0);
  }
}

}  // namespace
}  // namespace mgk
