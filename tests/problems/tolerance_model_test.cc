// The compute problems' rounding bounds checked on the CPU against models of what they must
// accept and reject: the references' own bf16 roundings (NCCL's per-hop rounding in every
// ring order, both bf16 products of RoPE, the three roundings of the MLP), other legitimate
// orders (fp32 throughout, one rounding), and the degenerates (zeros, one rank's share
// alone). The scales are the oracles' (sandbox/reference/mgk/oracle_gemm.cuh and each
// reference.cu), written again here from the statements. Small shapes, exact bf16
// round-to-nearest-even, fp64 for the exact values.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <vector>

namespace mgk::problems {
namespace {

constexpr double kU = 1.0 / 256;  // bf16's unit roundoff

float bf16(float x) {  // round to nearest even, to bf16 (finite values)
  uint32_t b;
  std::memcpy(&b, &x, 4);
  b += 0x7fff + ((b >> 16) & 1);
  b &= 0xffff0000u;
  float y;
  std::memcpy(&y, &b, 4);
  return y;
}

// oracle_gemm.cuh's fp32_accumulation: min(n, 4 sqrt(n)) u32, in units of bf16's u.
double fp32_accumulation(int64_t n) { return std::fmin(double(n), 4 * std::sqrt(double(n))) * std::ldexp(1.0, -24) / kU; }

std::vector<float> random_bf16(std::mt19937& g, size_t n, float std = 1) {
  std::normal_distribution<float> d(0, std);
  std::vector<float> v(n);
  for (auto& x : v) x = bf16(d(g));
  return v;
}

// How many elements of `got` miss exact within factor * u * scale (a NaN always misses).
int misses(const std::vector<double>& got, const std::vector<double>& exact, const std::vector<double>& scale,
           double factor) {
  int n = 0;
  for (size_t i = 0; i < got.size(); ++i) n += !(std::fabs(got[i] - exact[i]) <= factor * kU * scale[i] + 1e-30);  // NaN misses
  return n;
}

// gemm_allreduce (and gemm_reducescatter, the same sum by rows): C = sum_r A_r B_r.
struct RankProducts {
  int w, m, n, k;
  std::vector<std::vector<float>> a, b;  // per rank
  std::vector<double> exact, scale, scale_dot;  // scale_dot: the plain sum |a b| bound's
  std::vector<std::vector<float>> rounded;      // bf16(fp32 product) per rank
  std::vector<std::vector<float>> fp32;         // the fp32 product per rank

  RankProducts(int w_, int m_, int n_, int k_, uint32_t seed) : w(w_), m(m_), n(n_), k(k_) {
    std::mt19937 g(seed);
    exact.assign(m * n, 0), scale.assign(m * n, 0), scale_dot.assign(m * n, 0);
    std::vector<double> mag(m * n, 0);
    for (int r = 0; r < w; ++r) {
      a.push_back(random_bf16(g, size_t(m) * k));
      b.push_back(random_bf16(g, size_t(k) * n));
      rounded.emplace_back(m * n), fp32.emplace_back(m * n);
      for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) {
          double p = 0, pm = 0;
          float f = 0;
          for (int t = 0; t < k; ++t) {
            const float x = a[r][i * k + t], y = b[r][t * n + j];
            p += double(x) * y, pm += std::fabs(double(x) * y), f += x * y;
          }
          exact[i * n + j] += p, scale[i * n + j] += std::fabs(p), mag[i * n + j] += pm;
          fp32[r][i * n + j] = f, rounded[r][i * n + j] = bf16(f);
        }
    }
    for (int i = 0; i < m * n; ++i) scale[i] += fp32_accumulation(k) * mag[i], scale_dot[i] = mag[i];
  }

  // NCCL's ring: the partial sum starts at rank `first` and goes round in `step` order, each
  // hop rounded to bf16.
  std::vector<double> ring(int first, int step) const {
    std::vector<double> out(m * n);
    for (int i = 0; i < m * n; ++i) {
      float s = rounded[first][i];
      for (int h = 1; h < w; ++h) s = bf16(s + rounded[((first + h * step) % w + w) % w][i]);
      out[i] = s;
    }
    return out;
  }
  std::vector<double> fp32_then_round(bool round_partials) const {
    std::vector<double> out(m * n);
    for (int i = 0; i < m * n; ++i) {
      float s = 0;
      for (int r = 0; r < w; ++r) s += round_partials ? rounded[r][i] : fp32[r][i];
      out[i] = bf16(s);
    }
    return out;
  }
};

TEST(ToleranceModel, AReductionOfBf16ProductsPassesInEveryOrderAndRejectsZerosAndOneRank) {
  for (int w : {2, 4, 8}) {
    SCOPED_TRACE("W=" + std::to_string(w));
    const RankProducts p(w, 16, 16, 128, 1234 + w);
    const double factor = w + 1;  // problem.json: "W + 1"
    for (int first = 0; first < w; ++first)
      for (int step : {1, -1}) EXPECT_EQ(misses(p.ring(first, step), p.exact, p.scale, factor), 0) << first << step;
    EXPECT_EQ(misses(p.fp32_then_round(true), p.exact, p.scale, factor), 0);
    EXPECT_EQ(misses(p.fp32_then_round(false), p.exact, p.scale, factor), 0);
    const std::vector<double> zeros(p.exact.size(), 0);
    std::vector<double> own(p.rounded[0].begin(), p.rounded[0].end());
    EXPECT_GT(misses(zeros, p.exact, p.scale, factor), int(p.exact.size()) * 9 / 10);
    EXPECT_GT(misses(own, p.exact, p.scale, factor), int(p.exact.size()) * 9 / 10);
  }
}

// Why the scale is sum_r |P_r| and not the dot products' sum |a b|: at a large K and W the
// latter lets zeros pass nearly everywhere; the former still rejects them nearly everywhere.
TEST(ToleranceModel, ABoundInSumAbsABWouldLetZerosPassAtLargeK) {
  const RankProducts p(8, 4, 8, 8192, 99);
  const std::vector<double> zeros(p.exact.size(), 0);
  EXPECT_LT(misses(zeros, p.exact, p.scale_dot, 9), int(p.exact.size()) / 4);
  EXPECT_GT(misses(zeros, p.exact, p.scale, 9), int(p.exact.size()) * 9 / 10);
  EXPECT_EQ(misses(p.ring(3, -1), p.exact, p.scale, 9), 0);
}

// layernorm_backward's d_gamma: per column, sum over ranks and rows of dy * x_hat, the
// products rounded to bf16 first (PyTorch), each rank's sum rounded, then NCCL's ring.
TEST(ToleranceModel, LayerNormGammaPassesWithOrWithoutRoundedProductsAndRejectsOneRank) {
  const int rows = 512, cols = 64;
  for (int w : {2, 4, 8}) {
    SCOPED_TRACE("W=" + std::to_string(w));
    std::mt19937 g(7 + w);
    std::vector<double> exact(cols, 0), parts(cols, 0), abs_terms(cols, 0), squares(cols, 0);
    std::vector<std::vector<float>> rounded_sum(w, std::vector<float>(cols)), fp32_sum(w, std::vector<float>(cols));
    for (int r = 0; r < w; ++r) {
      const auto dy = random_bf16(g, size_t(rows) * cols), x = random_bf16(g, size_t(rows) * cols, 0.03125f);
      for (int c = 0; c < cols; ++c) {
        double e = 0;
        float with_rounding = 0, plain = 0;
        for (int i = 0; i < rows; ++i) {
          const double t = double(dy[i * cols + c]) * x[i * cols + c];
          e += t, abs_terms[c] += std::fabs(t), squares[c] += t * t;
          with_rounding += bf16(float(t)), plain += float(t);
        }
        exact[c] += e, parts[c] += std::fabs(e);
        rounded_sum[r][c] = bf16(with_rounding), fp32_sum[r][c] = plain;
      }
    }
    std::vector<double> scale(cols);  // layernorm_backward/reference.cu's oracle
    for (int c = 0; c < cols; ++c) scale[c] = parts[c] + fp32_accumulation(rows) * abs_terms[c] + 2 * std::sqrt(squares[c]);
    std::vector<double> ring(cols), fused(cols), own(cols), zeros(cols, 0);
    for (int c = 0; c < cols; ++c) {
      float s = rounded_sum[w - 1][c], f = 0;
      for (int r = w - 2; r >= 0; --r) s = bf16(s + rounded_sum[r][c]);
      for (int r = 0; r < w; ++r) f += fp32_sum[r][c];
      ring[c] = s, fused[c] = bf16(f), own[c] = rounded_sum[0][c];
    }
    EXPECT_EQ(misses(ring, exact, scale, w + 1), 0);
    EXPECT_EQ(misses(fused, exact, scale, w + 1), 0);
    EXPECT_GT(misses(zeros, exact, scale, w + 1), cols * 3 / 4);
    EXPECT_GT(misses(own, exact, scale, w + 1), cols * 3 / 4);
  }
}

// rope_allgather: bf16(bf16(x c) + bf16(r s)) as PyTorch rounds, and one fp32 rounding, both
// within 2 u (|x c| + |r s| + |x c + r s|).
TEST(ToleranceModel, RopePassesWithPyTorchsRoundingsAndWithOneAndRejectsZeros) {
  std::mt19937 g(17);
  const auto x = random_bf16(g, 4096), c = random_bf16(g, 4096), s = random_bf16(g, 4096), r = random_bf16(g, 4096);
  std::vector<double> exact, scale, pytorch, fused, zeros(4096, 0);
  for (int i = 0; i < 4096; ++i) {
    const double p = double(x[i]) * c[i], q = double(r[i]) * s[i];
    exact.push_back(p + q), scale.push_back(std::fabs(p) + std::fabs(q) + std::fabs(p + q));
    pytorch.push_back(bf16(bf16(x[i] * c[i]) + bf16(r[i] * s[i])));
    fused.push_back(bf16(std::fmaf(x[i], c[i], r[i] * s[i])));
  }
  EXPECT_EQ(misses(pytorch, exact, scale, 2), 0);
  EXPECT_EQ(misses(fused, exact, scale, 2), 0);
  EXPECT_GT(misses(zeros, exact, scale, 2), 4000);
}

// combined_sharded_gemms: y = bf16(bf16(silu(bf16(x W1))) W2) as the reference rounds, and
// with h kept in fp32, both within 2 u S, S = |y| + 4 sqrt(sum_f (p_f W2_f)^2) + A_F sum_f
// |a_f W2_f| (the oracle's: the roundings of h_f and a_f as a random walk over f), and
// within half of it; zeros, the rows computed from this rank's columns alone, GELU and
// sigmoid for SiLU fail. W1 is N(0, 1 / H) as in problem.json, so h is of order 1.
struct MlpCase {
  int rows, h_dim, f_dim;
  std::vector<float> x, w1, w2;
  MlpCase(int rows_, int h, int f, float w1_std, uint32_t seed) : rows(rows_), h_dim(h), f_dim(f) {
    std::mt19937 g(seed);
    x = random_bf16(g, size_t(rows) * h), w1 = random_bf16(g, size_t(h) * f, w1_std), w2 = random_bf16(g, size_t(f) * h);
  }
  // act 0: SiLU, 1: GELU (erf), 2: sigmoid. h_fp32: h is not rounded to bf16. local: only the
  // first H / 4 columns of x (one rank's of four). walk: the oracle's S (else the worst case
  // |y| + sum_f p_f |W2_f| the suite used before).
  std::vector<double> run(int act, bool h_fp32, bool local, std::vector<double>* exact = nullptr,
                          std::vector<double>* scale = nullptr, bool walk = true) const {
    auto silu = [](double v) { return v / (1 + std::exp(-v)); };
    auto f_act = [&](double v) {
      return act == 0 ? silu(v) : act == 1 ? 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))) : 1 / (1 + std::exp(-v));
    };
    std::vector<double> y(size_t(rows) * h_dim);
    for (int i = 0; i < rows; ++i) {
      std::vector<float> a(f_dim);
      std::vector<double> ea(f_dim), p(f_dim);
      for (int f = 0; f < f_dim; ++f) {
        double e = 0, mag = 0;
        float acc = 0;
        for (int t = 0; t < h_dim; ++t) {
          const double term = double(x[i * h_dim + t]) * w1[t * f_dim + f];
          e += term, mag += std::fabs(term);
          if (!local || t < h_dim / 4) acc += float(term);
        }
        const float h = h_fp32 ? acc : bf16(acc);
        a[f] = bf16(float(f_act(h)));
        ea[f] = silu(e);
        p[f] = 1.1 * (std::fabs(e) + fp32_accumulation(h_dim) * mag) + std::fabs(ea[f]);
      }
      for (int j = 0; j < h_dim; ++j) {
        double e = 0, sq = 0, abs_sum = 0, worst = 0;
        float acc = 0;
        for (int f = 0; f < f_dim; ++f) {
          const double w = w2[f * h_dim + j];
          e += ea[f] * w, sq += p[f] * p[f] * w * w, abs_sum += std::fabs(ea[f] * w);
          worst += (p[f] + std::fabs(ea[f]) * fp32_accumulation(f_dim)) * std::fabs(w);
          acc += a[f] * float(w);
        }
        y[i * h_dim + j] = bf16(acc);
        if (exact)
          (*exact)[i * h_dim + j] = e,
          (*scale)[i * h_dim + j] = walk ? std::fabs(e) + 4 * std::sqrt(sq) + fp32_accumulation(f_dim) * abs_sum
                                         : std::fabs(e) + worst;
      }
    }
    return y;
  }
};

TEST(ToleranceModel, TheMlpChainPassesWithTheReferencesRoundingsAndFewerAndRejectsAnotherActivation) {
  // pkb's H and F (256, 512), medium's (1024, 4096), odd's at W = 2 (200, 500).
  for (auto [h, f] : {std::pair{256, 512}, std::pair{1024, 4096}, std::pair{200, 500}}) {
    SCOPED_TRACE("H=" + std::to_string(h) + " F=" + std::to_string(f));
    const MlpCase c(8, h, f, float(1 / std::sqrt(double(h))), 23 + h);
    const int n = 8 * h;
    std::vector<double> exact(n), scale(n), zeros(n, 0);
    const auto reference = c.run(0, false, false, &exact, &scale);
    EXPECT_EQ(misses(reference, exact, scale, 1), 0);  // within half the bound (factor 2)
    EXPECT_EQ(misses(c.run(0, true, false), exact, scale, 1), 0);
    EXPECT_GT(misses(zeros, exact, scale, 2), n / 2);
    EXPECT_GT(misses(c.run(0, false, true), exact, scale, 2), n / 2);
    EXPECT_GT(misses(c.run(1, false, false), exact, scale, 2), n / 3);  // GELU: ~57 % of elements
    EXPECT_GT(misses(c.run(2, false, false), exact, scale, 2), n / 2);
  }
}

// Why the bound is a random walk over f: with the worst-case sum over f of p_f |W2_f| at
// medium's H and F, GELU for SiLU passes every element (and with a W1 of std 1, at pkb's).
TEST(ToleranceModel, AWorstCaseSumOverTheChainLetsAWrongActivationPass) {
  for (auto [h, f, std] : {std::tuple{1024, 4096, 1 / 32.0f}, std::tuple{256, 512, 1.0f}}) {
    const MlpCase c(4, h, f, std, 29);
    std::vector<double> exact(4 * h), scale(4 * h), walk_exact(4 * h), walk_scale(4 * h);
    c.run(0, false, false, &exact, &scale, false);
    EXPECT_EQ(misses(c.run(1, false, false), exact, scale, 2), 0) << h;
    if (std == 1.0f) {  // and h of size sqrt(H) hides it from the walk's bound too
      c.run(0, false, false, &walk_exact, &walk_scale, true);
      EXPECT_EQ(misses(c.run(1, false, false), walk_exact, walk_scale, 2), 0) << h;
    }
  }
}

// The rms norms' inputs (problem.json "rows"): every 16th row zero on every rank, another
// every 16th 2^-10 times smaller, the rest N(0, 1). rows x cols per rank, `w` ranks.
std::vector<std::vector<float>> rms_inputs(std::mt19937& g, int w, int rows, int cols) {
  std::vector<std::vector<float>> x;
  for (int r = 0; r < w; ++r) {
    x.push_back(random_bf16(g, size_t(rows) * cols));
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j) {
        float& v = x[r][size_t(i) * cols + j];
        v = i % 16 == 0 ? 0.0f : i % 16 == 8 ? v * 0x1p-10f : v;  // a power of two: still bf16
      }
  }
  return x;
}

// How the norm's epsilon enters: 0 right, 1 left out, 2 outside the square root.
float rms_scale(float ms, int eps_mode) {
  const float eps = 1e-5f;
  return eps_mode == 0 ? 1 / std::sqrt(ms + eps) : eps_mode == 1 ? 1 / std::sqrt(ms) : 1 / (std::sqrt(ms) + eps);
}

// reducescatter_fused_rmsnorm: y = gamma m / sqrt(mean(m^2) + eps), m = (sum_s x_s) / W, with
// the reference's roundings (bf16 ring, bf16 m, fp32 norm, bf16 y) within half of 2 u S (the
// oracle's S); without eps, or with eps outside the root, the zero rows give NaN or the tiny
// rows miss.
TEST(ToleranceModel, ReduceScatterRmsNormRejectsAMissingEpsilonInItsZeroAndTinyRows) {
  const int rows = 64, h = 128;
  for (int w : {2, 4, 8}) {
    SCOPED_TRACE("W=" + std::to_string(w));
    std::mt19937 g(31 + w);
    const auto x = rms_inputs(g, w, rows, h);
    const auto gamma = random_bf16(g, h);
    std::vector<double> exact(rows * h), scale(rows * h);
    std::vector<double> y[3];
    for (int i = 0; i < rows; ++i) {
      std::vector<double> m(h), e(h);
      std::vector<float> mr(h);
      double ms = 0, me = 0;
      float ms32 = 0;
      for (int j = 0; j < h; ++j) {
        double sum = 0, mag = 0;
        float ring = x[0][i * h + j];
        for (int s = 0; s < w; ++s) sum += x[s][i * h + j], mag += std::fabs(x[s][i * h + j]);
        for (int s = 1; s < w; ++s) ring = bf16(ring + x[s][i * h + j]);
        m[j] = sum / w, e[j] = double(w - 1) / w * mag + std::fabs(m[j]);
        mr[j] = bf16(ring * (1.0f / float(w)));
        ms += m[j] * m[j], me += std::fabs(m[j]) * e[j], ms32 += mr[j] * mr[j];
      }
      ms /= h, me /= h;
      const double d = ms + 1e-5;
      for (int j = 0; j < h; ++j) {
        const double yy = gamma[j] * m[j] / std::sqrt(d);
        exact[i * h + j] = yy;
        scale[i * h + j] = std::fabs(yy) + std::fabs(gamma[j]) * e[j] / std::sqrt(d) + std::fabs(yy) * me / d;
        for (int mode = 0; mode < 3; ++mode)
          y[mode].push_back(bf16(mr[j] * rms_scale(ms32 / float(h), mode) * gamma[j]));
      }
    }
    EXPECT_EQ(misses(y[0], exact, scale, 1), 0);  // the reference: within half the bound
    for (int mode : {1, 2}) {
      std::vector<double> tiny_rows, tiny_exact, tiny_scale;
      int nan_in_zero_rows = 0;
      for (int i = 0; i < rows; ++i)
        for (int j = 0; j < h; ++j) {
          if (i % 16 == 0) nan_in_zero_rows += std::isnan(y[mode][i * h + j]);
          if (i % 16 == 8)
            tiny_rows.push_back(y[mode][i * h + j]), tiny_exact.push_back(exact[i * h + j]),
                tiny_scale.push_back(scale[i * h + j]);
        }
      if (mode == 1) {
        EXPECT_EQ(nan_in_zero_rows, 4 * h);
      }
      EXPECT_GT(misses(tiny_rows, tiny_exact, tiny_scale, 2), int(tiny_rows.size()) * 9 / 10) << mode;
    }
  }
}

// reducescatter_fused_rmsnorm at `wide` (2 rows of H = 2^19): the reference's fp32 mean
// square (128 threads a row) stays within half of 2 u S; accumulated in bf16, it fails.
TEST(ToleranceModel, ReduceScatterRmsNormRejectsABf16MeanSquareAtWide) {
  const int rows = 2, h = 524288, w = 2;
  std::mt19937 g(61);
  std::vector<std::vector<float>> x;
  for (int r = 0; r < w; ++r) x.push_back(random_bf16(g, size_t(rows) * h));
  const auto gamma = random_bf16(g, h);
  std::vector<double> exact, scale, reference, bf16_ms;
  for (int i = 0; i < rows; ++i) {
    std::vector<double> m(h), e(h);
    std::vector<float> mr(h), t32(128, 0), t16(128, 0);
    double ms = 0, me = 0;
    for (int j = 0; j < h; ++j) {
      const float a = x[0][size_t(i) * h + j], b = x[1][size_t(i) * h + j];
      m[j] = (double(a) + b) / 2, e[j] = 0.5 * (std::fabs(a) + std::fabs(b)) + std::fabs(m[j]);
      mr[j] = bf16(bf16(a + b) * 0.5f);
      ms += m[j] * m[j], me += std::fabs(m[j]) * e[j];
      t32[j % 128] += mr[j] * mr[j], t16[j % 128] = bf16(t16[j % 128] + mr[j] * mr[j]);
    }
    ms /= h, me /= h;
    float s32 = 0, s16 = 0;
    for (int t = 0; t < 128; ++t) s32 += t32[t], s16 += t16[t];
    const double d = ms + 1e-5;
    for (int j = 0; j < h; ++j) {
      const double yy = gamma[j] * m[j] / std::sqrt(d);
      exact.push_back(yy);
      scale.push_back(std::fabs(yy) + std::fabs(gamma[j]) * e[j] / std::sqrt(d) + std::fabs(yy) * me / d);
      reference.push_back(bf16(mr[j] * rms_scale(s32 / float(h), 0) * gamma[j]));
      bf16_ms.push_back(bf16(mr[j] * rms_scale(s16 / float(h), 0) * gamma[j]));
    }
  }
  EXPECT_EQ(misses(reference, exact, scale, 1), 0);
  EXPECT_GT(misses(bf16_ms, exact, scale, 2), int(exact.size()) * 3 / 4);
}

// tp_rms_norm: the reference (fp32 sums of squares, 256 threads a row, 8 consecutive elements
// a load; bf16(w bf16(x rsqrt))) within its two roundings, 2 u |y|, and the plain candidate
// (fp32, one rounding) within half of 3 u |y|; a bf16 running sum of squares fails at `wide`
// (NL = 2^19), and so does a norm without eps in the zero and tiny rows.
TEST(ToleranceModel, TpRmsNormRejectsABf16SumOfSquaresAtWideAndAMissingEpsilon) {
  struct Shape { int w, rows, nl; };
  for (const Shape sh : {Shape{2, 32, 1024}, Shape{2, 16, 524288}, Shape{4, 16, 1024}}) {
    SCOPED_TRACE("W=" + std::to_string(sh.w) + " NL=" + std::to_string(sh.nl));
    std::mt19937 g(41 + sh.nl);
    const auto x = rms_inputs(g, sh.w, sh.rows, sh.nl);
    const int n = sh.w * sh.nl;
    std::vector<std::vector<float>> weight;
    for (int r = 0; r < sh.w; ++r) weight.push_back(random_bf16(g, sh.nl));
    std::vector<double> exact, scale, reference, plain, bf16_sum, no_eps, eps_outside;
    for (int i = 0; i < sh.rows; ++i) {
      double ss = 0;
      float ref_sum = 0, plain_sum = 0, bf16_total = 0;
      for (int r = 0; r < sh.w; ++r) {
        const float* row = &x[r][size_t(i) * sh.nl];
        std::vector<float> ref_t(256, 0), plain_t(256, 0), bf16_t(256, 0);
        for (int j = 0; j < sh.nl; ++j) {
          const float v2 = row[j] * row[j];
          ss += double(v2);
          ref_t[(j / 8) % 256] += v2;  // 8 elements a 16-byte load, 256 threads
          plain_t[j % 256] += v2;
          bf16_t[j % 256] = bf16(bf16_t[j % 256] + v2);
        }
        float rr = 0, pr = 0, br = 0;
        for (int t = 0; t < 256; ++t) rr += ref_t[t], pr += plain_t[t], br += bf16_t[t];
        ref_sum += rr, plain_sum += pr, bf16_total += br;
      }
      const double inv = 1 / std::sqrt(ss / n + 1e-5);
      for (int r = 0; r < sh.w; ++r)
        for (int j = 0; j < sh.nl; ++j) {
          const float v = x[r][size_t(i) * sh.nl + j], w = weight[r][j];
          const double e = double(w) * v * inv;
          exact.push_back(e), scale.push_back(std::fabs(e));
          reference.push_back(bf16(w * bf16(v * rms_scale(ref_sum / float(n), 0))));
          plain.push_back(bf16(w * v * rms_scale(plain_sum / float(n), 0)));
          bf16_sum.push_back(bf16(w * v * rms_scale(bf16_total / float(n), 0)));
          no_eps.push_back(bf16(w * v * rms_scale(plain_sum / float(n), 1)));
          eps_outside.push_back(bf16(w * v * rms_scale(plain_sum / float(n), 2)));
        }
    }
    const int total = int(exact.size()), special = total / 8;  // the zero and the tiny rows
    // The reference's two roundings of values of size |y| reach 2 u |y| (2/3 of the bound, as
    // before `wide`); its fp32 sums add almost nothing, even over 2048 squares a thread.
    EXPECT_EQ(misses(reference, exact, scale, 2.05), 0);
    EXPECT_EQ(misses(plain, exact, scale, 1.5), 0);  // one rounding: half of factor 3
    if (sh.nl == 524288) {
      EXPECT_GT(misses(bf16_sum, exact, scale, 3), total * 9 / 10);
    } else {
      EXPECT_EQ(misses(bf16_sum, exact, scale, 3), 0);  // why `wide` is in the defaults
    }
    EXPECT_GE(misses(no_eps, exact, scale, 3), special * 9 / 10);
    EXPECT_GE(misses(eps_outside, exact, scale, 3), special / 2 * 9 / 10);  // the tiny rows
  }
}

// fused_adam_grad_unshard_allgather: the reference's bf16 chain and an fp32 Adam within half
// of 2 u S (the oracle's S for w); a bias correction with step t + 1 fails at STEP = 1 and 2
// (tiny, odd: in the defaults) and passes at STEP >= 5, inside the chain's own tolerance.
TEST(ToleranceModel, AdamsStepOffByOneFailsWhereTheBiasCorrectionIsStrong) {
  const double b1 = 0.9, b2 = 0.999, lr = 0.1, eps = 1e-8;
  for (int step : {1, 2, 5, 10}) {
    SCOPED_TRACE("STEP=" + std::to_string(step));
    std::mt19937 g(51 + step);
    std::normal_distribution<float> normal(0, 1);
    std::uniform_real_distribution<float> uniform(0.0005f, 0.002f);
    const double c1 = 1 - std::pow(b1, step), c2 = 1 - std::pow(b2, step);
    const double c1n = 1 - std::pow(b1, step + 1), c2n = 1 - std::pow(b2, step + 1);
    std::vector<double> exact, scale, reference, plain, next_step;
    for (int k = 0; k < 20000; ++k) {
      const float gi = bf16(normal(g)), w0 = bf16(normal(g)), m0 = bf16(0.1f * normal(g)), v0 = bf16(uniform(g));
      const double m = b1 * m0 + (1 - b1) * gi, v = b2 * v0 + (1 - b2) * double(gi) * gi;
      const double em = b1 * std::fabs(m0) + std::fabs(m), ev = b2 * v0 + v;
      const double den = std::sqrt(v / c2) + eps, r = (m / c1) / den;
      const double er = (em / c1) / den + std::fabs(r) * ev / (2 * v) + 6 * std::fabs(r);
      exact.push_back(w0 - lr * r), scale.push_back(std::fabs(w0 - lr * r) + lr * er);
      const float fm = bf16(bf16(m0 * float(b1)) + float(1 - b1) * gi), fv = bf16(bf16(v0 * float(b2)) + float(1 - b2) * gi * gi);
      const float mh = bf16(fm / float(c1)), vh = bf16(fv / float(c2)), dn = bf16(bf16(std::sqrt(vh)) + float(eps));
      reference.push_back(bf16(w0 + bf16(bf16(mh / dn) * float(-lr))));
      const float pm = float(b1) * m0 + float(1 - b1) * gi, pv = float(b2) * v0 + float(1 - b2) * gi * gi;
      auto adam = [&](double a1, double a2) {
        return bf16(w0 - float(lr) * (pm / float(a1)) / (std::sqrt(pv / float(a2)) + float(eps)));
      };
      plain.push_back(adam(c1, c2)), next_step.push_back(adam(c1n, c2n));
    }
    EXPECT_EQ(misses(reference, exact, scale, 1), 0);
    EXPECT_EQ(misses(plain, exact, scale, 1), 0);
    const int off_by_one = misses(next_step, exact, scale, 2);
    if (step == 1) {
      EXPECT_GT(off_by_one, 20000 / 2);
    } else if (step == 2) {
      EXPECT_GT(off_by_one, 20000 / 4);
    } else {
      EXPECT_EQ(off_by_one, 0);
    }
  }
}

// grad_acc_loss: loss_sum = sum_s bf16(loss_s bf16(local_s)), every order of NCCL's bf16
// ring and an fp32 sum rounded once within (W + 2) u sum |t_s| of the exact sum, in every
// trial; a rank's own term alone (no all-reduce) passes on every rank in no trial.
TEST(ToleranceModel, GradAccLossSumPassesInEveryRingOrderAndRejectsOneRanksTerm) {
  std::mt19937 g(2323);
  std::normal_distribution<float> normal(0, 1);
  std::uniform_int_distribution<int64_t> count(1, (int64_t(1) << 21) - 1);
  for (int w : {2, 3, 4, 8}) {
    SCOPED_TRACE("W=" + std::to_string(w));
    int local_only_passes = 0;
    for (int trial = 0; trial < 2000; ++trial) {
      std::vector<float> t(w), t32(w);
      double exact = 0, mag = 0;
      for (int s = 0; s < w; ++s) {
        const float loss = bf16(normal(g));
        const int64_t n = count(g);
        t[s] = bf16(loss * bf16(float(n))), t32[s] = loss * float(n);
        exact += double(loss) * double(n), mag += std::fabs(double(loss) * double(n));
      }
      const double bound = (w + 2) * kU * mag;
      for (int first = 0; first < w; ++first)
        for (int step : {1, -1}) {
          float acc = t[first];
          for (int h = 1; h < w; ++h) acc = bf16(acc + t[((first + h * step) % w + w) % w]);
          EXPECT_LE(std::fabs(acc - exact), bound) << "trial " << trial;
        }
      float fused = 0;
      for (float v : t32) fused += v;
      EXPECT_LE(std::fabs(bf16(fused) - exact), bound) << "trial " << trial;
      bool all_pass = true;
      for (int s = 0; s < w; ++s) all_pass &= std::fabs(t[s] - exact) <= bound;
      local_only_passes += all_pass;
    }
    EXPECT_EQ(local_only_passes, 0);
  }
}

// load_balancing_loss_fn, with problem.json's logits N(100, 2^2) in bf16 (a grid of 0.5:
// equal logits tie, others are e^0.5 apart in p). One rank's M tokens: the exact L_r (ties to
// the lower index) and its near ties (an expert left out within a relative 2^-6 of the 2nd's
// p, not equal to it: none on this grid), and the implementations: 0 the reference (bf16 p,
// bf16 P_e), 1 fp32 throughout.
struct LoadBalancingRank {
  static constexpr int kE = 8;
  double exact = 0, ties = 0;  // ties: the oracle's T for this rank, times W
  double variant[2] = {0, 0};

  LoadBalancingRank(std::mt19937& g, int m) {
    std::normal_distribution<float> normal(100, 2);
    std::vector<double> psum(kE, 0), picks(kE, 0);
    std::vector<std::vector<double>> vpsum(2, std::vector<double>(kE, 0)), vpicks(2, std::vector<double>(kE, 0));
    int ambiguous = 0;
    for (int t = 0; t < m; ++t) {
      float x[kE], top = -INFINITY, sum = 0;
      double p[kE], dtop = -INFINITY, dsum = 0;
      for (int e = 0; e < kE; ++e) x[e] = bf16(normal(g)), top = std::fmax(top, x[e]), dtop = std::fmax(dtop, x[e]);
      for (int e = 0; e < kE; ++e) p[e] = std::exp(double(x[e]) - dtop), dsum += p[e];
      float p32[kE];
      for (int e = 0; e < kE; ++e) p32[e] = std::exp(x[e] - top), sum += p32[e];
      for (int e = 0; e < kE; ++e) p[e] /= dsum, p32[e] /= sum;
      std::vector<int> order(kE);
      for (int e = 0; e < kE; ++e) order[e] = e;
      std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return p[a] > p[b]; });  // ties: lower index
      for (int e = 0; e < kE; ++e) psum[e] += p[e];
      picks[order[0]] += 1, picks[order[1]] += 1;
      double third = -1;
      for (int k = 2; k < kE; ++k)
        if (p[order[k]] != p[order[1]]) third = std::fmax(third, p[order[k]]);
      ambiguous += p[order[1]] - third <= 0x1p-6 * p[order[1]];
      for (int v = 0; v < 2; ++v) {
        float q[kE];
        for (int e = 0; e < kE; ++e) q[e] = v == 1 ? p32[e] : bf16(p32[e]);
        unsigned taken = 0;
        for (int k = 0; k < 2; ++k) {
          int best = -1;
          for (int e = 0; e < kE; ++e)
            if (!(taken >> e & 1) && (best < 0 || q[e] > q[best])) best = e;
          taken |= 1u << best;
        }
        for (int e = 0; e < kE; ++e) vpsum[v][e] += q[e], vpicks[v][e] += taken >> e & 1;
      }
    }
    double lr = 0, pmax = 0, pmin = 1;
    for (int e = 0; e < kE; ++e) {
      const double P = psum[e] / m;
      lr += picks[e] / m * P, pmax = std::fmax(pmax, P), pmin = std::fmin(pmin, P);
    }
    exact = kE * lr, ties = ambiguous * kE * (pmax - pmin) / m;
    for (int v = 0; v < 2; ++v) {
      float l = 0;
      for (int e = 0; e < kE; ++e) {
        const float P = float(vpsum[v][e] / m);
        l += float(vpicks[v][e] / m) * (v == 1 ? P : bf16(P));
      }
      variant[v] = kE * l;
    }
  }
};

// The oracle's allowed error: 3 u32 S, S = 2^16 (|L| (1 + fp32(M)) + T / u) in units of u32.
double load_balancing_allowed(double loss, double ties, int m) {
  return 3 * std::ldexp(1.0, -24) * float(0x1p16 * (std::fabs(loss) * (1 + fp32_accumulation(m)) + ties / kU));
}

// The reference's roundings (bf16 p, bf16 P_e) and fp32 throughout pass within half the
// bound; there is no near tie on the logits' grid (T = 0); L_r / W (no all-reduce) and the
// constant 1 fail.
TEST(ToleranceModel, LoadBalancingLossPassesWithBf16OrFp32AndRejectsTheUnreducedLoss) {
  for (int m : {4, 999, 1024}) {
    for (int w : {2, 4, 8}) {
      SCOPED_TRACE("M=" + std::to_string(m) + " W=" + std::to_string(w));
      std::mt19937 g(24 + w + m);
      for (int trial = 0; trial < (m == 4 ? 200 : 3); ++trial) {
        double exact = 0, ties = 0, variant[2] = {0, 0};
        std::vector<double> own;
        for (int r = 0; r < w; ++r) {
          const LoadBalancingRank rank(g, m);
          exact += rank.exact / w, ties += rank.ties / w;
          for (int v = 0; v < 2; ++v) variant[v] += rank.variant[v] / w;
          own.push_back(rank.variant[0] / w);
        }
        EXPECT_EQ(ties, 0.0);
        const double allowed = load_balancing_allowed(exact, ties, m);
        for (int v = 0; v < 2; ++v) EXPECT_LE(std::fabs(variant[v] - exact), 0.5 * allowed) << "variant " << v;
        for (int r = 0; r < w; ++r) EXPECT_GT(std::fabs(own[r] - exact), allowed) << "rank " << r;
        EXPECT_GT(std::fabs(1.0 - exact), allowed);  // the constant degenerate
      }
    }
  }
}

// A rank's own L_r, not averaged (the all-reduce skipped, divided by 1): at M = 1024 every
// rank's L_r is within the bound of the mean; at `tiny` (M = 4) it misses the bound in most
// trials at W = 2 (the weakest world: one peer), so that the 3 trials of an evaluation all
// pass it about once in 2000 evaluations.
TEST(ToleranceModel, LoadBalancingLossRejectsARanksOwnLossAtTinyM) {
  std::mt19937 g(2024);
  int passed_tiny = 0, passed_pkb = 0;
  constexpr int kTrials = 1000;
  for (int trial = 0; trial < kTrials; ++trial) {
    for (int m : {4, 1024}) {
      if (m == 1024 && trial >= 50) continue;
      const LoadBalancingRank r0(g, m), r1(g, m);
      const double exact = (r0.exact + r1.exact) / 2;
      const bool passes = std::fabs(r0.variant[0] - exact) <= load_balancing_allowed(exact, 0, m);
      (m == 4 ? passed_tiny : passed_pkb) += passes;
    }
  }
  EXPECT_LT(passed_tiny, kTrials / 8) << "M = 4";  // about 8%
  EXPECT_GE(passed_pkb, 45) << "M = 1024: why tiny is in the defaults";
}

// moe_epgroupgemm_lora_backward: an element-wise bf16 sum over W ranks, bound W u sum|g|.
// NCCL's ring from every start in both directions (a bf16 rounding per hop) and fp32 then one
// rounding pass; zeros and the rank's own gradient (no communication) fail nearly everywhere.
TEST(ToleranceModel, TheLoraGradientSumPassesEveryRingOrderAndRejectsOneRank) {
  for (int w : {2, 4, 8}) {
    SCOPED_TRACE("W=" + std::to_string(w));
    std::mt19937 g(77 + w);
    const size_t n = 4096;
    std::vector<std::vector<float>> x(w);
    for (auto& v : x) v = random_bf16(g, n);
    std::vector<double> exact(n, 0), scale(n, 0), zeros(n, 0), own(n), fp32(n);
    for (size_t i = 0; i < n; ++i) {
      float f = 0;
      for (int r = 0; r < w; ++r) exact[i] += x[r][i], scale[i] += std::fabs(x[r][i]), f += x[r][i];
      own[i] = x[0][i], fp32[i] = bf16(f);
    }
    const double factor = w;  // problem.json: "W"
    for (int first = 0; first < w; ++first)
      for (int step : {1, -1}) {
        std::vector<double> ring(n);
        for (size_t i = 0; i < n; ++i) {
          float acc = x[first][i];
          for (int h = 1; h < w; ++h) acc = bf16(acc + x[((first + step * h) % w + w) % w][i]);
          ring[i] = acc;
        }
        EXPECT_EQ(misses(ring, exact, scale, factor), 0) << first << step;
      }
    EXPECT_EQ(misses(fp32, exact, scale, factor), 0);
    EXPECT_GT(misses(zeros, exact, scale, factor), int(n) * 9 / 10);
    EXPECT_GT(misses(own, exact, scale, factor), int(n) / 2);
  }
}

// moe_post_all2all: w0 y0 + w1 y1 with the bound 3 u (|w0 y0| + |w1 y1|): torch's roundings
// (each product to bf16, then the bf16 add) and an fp32 fused combine pass; dropping one of
// the two rows (a peer's row missing) fails nearly everywhere.
TEST(ToleranceModel, TheMoeCombinePassesTorchsRoundingsAndFusedAndRejectsAMissingRow) {
  std::mt19937 g(4242);
  std::uniform_real_distribution<float> u01(0, 1);
  const size_t n = 1 << 16;
  std::vector<double> exact(n), scale(n), torch(n), fused(n), missing(n);
  for (size_t i = 0; i < n; ++i) {
    const float w0 = bf16(u01(g)), w1 = bf16(u01(g));
    const auto y = random_bf16(g, 2);
    exact[i] = double(w0) * y[0] + double(w1) * y[1];
    scale[i] = std::fabs(double(w0) * y[0]) + std::fabs(double(w1) * y[1]);
    torch[i] = bf16(bf16(w0 * y[0]) + bf16(w1 * y[1]));
    fused[i] = bf16(w0 * y[0] + w1 * y[1]);
    missing[i] = bf16(w0 * y[0]);
  }
  EXPECT_EQ(misses(torch, exact, scale, 3), 0);
  EXPECT_EQ(misses(fused, exact, scale, 3), 0);
  EXPECT_GT(misses(missing, exact, scale, 3), int(n) * 9 / 10);
}


// float8_e4m3fn's cast as PyTorch does it (round to nearest even, not saturating: past 464
// the nearest step is 480, the NaN encoding), written from the format's definition.
double e4m3_nosat(double q) {
  const double a = std::fabs(q);
  if (!(a < 464) && a != 464) return std::nan("");
  const int e = a < 0x1p-6 ? -6 : std::ilogb(a);  // subnormals share the smallest exponent's step
  const double step = std::ldexp(1.0, e - 3);
  const double v = std::nearbyint(a / step) * step;  // exact scaling; nearbyint ties to even
  return std::copysign(v, q);
}

// fp8_reduce_scatter_grads: recon_q = bf16(fp32(e4m3(fp32(x / scale_q))) * scale_q) per rank
// (scale from its own amax and a random history), then NCCL's bf16 ring over the W ranks and
// the average (times fp32(1/W), as torch's div_, or divided). The bound (W + 1) u S, S = sum
// |recon| / W, accepts every ring order and fp32 accumulation; zeros, this rank's own slice
// alone and, at W = 2, skipping the quantisation fail.
TEST(ToleranceModel, TheFp8ReduceScatterPassesInEveryOrderAndRejectsOneRank) {
  EXPECT_EQ(e4m3_nosat(449), 448);
  EXPECT_EQ(e4m3_nosat(463.9), 448);
  EXPECT_EQ(e4m3_nosat(464), 448);  // the tie, to the even mantissa
  EXPECT_TRUE(std::isnan(e4m3_nosat(464.01)));
  EXPECT_EQ(e4m3_nosat(0x1p-10), 0);  // half the smallest subnormal: to even (zero)
  EXPECT_EQ(e4m3_nosat(0x1.8p-9), 0x1p-8);
  for (int w : {2, 3, 4, 6, 8}) {
    SCOPED_TRACE("W=" + std::to_string(w));
    const int p = 512;
    std::mt19937 g(4321 + w);
    std::vector<std::vector<float>> x, recon;
    for (int q = 0; q < w; ++q) {
      x.push_back(random_bf16(g, size_t(w) * p));
      const auto hist = random_bf16(g, 16, 2.5f);
      float m = 0;
      for (float v : x.back()) m = std::fmax(m, std::fabs(v));
      for (int k = 1; k < 16; ++k) m = std::fmax(m, hist[k]);  // slot 0 rolls out
      const float scale = bf16(std::fmax(m, 1e-12f)) / 448.0f;
      recon.emplace_back();
      for (float v : x.back()) recon.back().push_back(bf16(float(e4m3_nosat(v / scale)) * scale));
    }
    std::vector<double> exact(p), scale(p), zeros(p, 0), own(p), unquantised(p);
    for (int i = 0; i < p; ++i) {
      double sum = 0, mag = 0, raw = 0;
      for (int q = 0; q < w; ++q) sum += recon[q][i], mag += std::fabs(recon[q][i]), raw += x[q][i];
      exact[i] = sum / w, scale[i] = mag / w, own[i] = bf16(recon[0][i] / float(w)), unquantised[i] = raw / w;
    }
    const double factor = w + 1;  // problem.json: "W + 1"
    for (int first = 0; first < w; ++first)
      for (int step : {1, -1})
        for (bool reciprocal : {true, false}) {
          std::vector<double> got(p);
          for (int i = 0; i < p; ++i) {
            float s = recon[first][i];
            for (int h = 1; h < w; ++h) s = bf16(s + recon[((first + h * step) % w + w) % w][i]);
            got[i] = bf16(reciprocal ? s * (1.0f / float(w)) : s / float(w));
          }
          EXPECT_EQ(misses(got, exact, scale, factor), 0) << first << step << reciprocal;
        }
    std::vector<double> fp32(p);
    for (int i = 0; i < p; ++i) {
      float s = 0;
      for (int q = 0; q < w; ++q) s += recon[q][i];
      fp32[i] = bf16(s / float(w));
    }
    EXPECT_EQ(misses(fp32, exact, scale, factor), 0);
    EXPECT_GT(misses(zeros, exact, scale, factor), p * 9 / 10);
    EXPECT_GT(misses(own, exact, scale, factor), p * 3 / 4);
    if (w == 2) {
      EXPECT_GT(misses(unquantised, exact, scale, factor), p / 3);
    }
  }
}

// ring_attention with problem.json's inputs, q ~ N(1, 1), k ~ N(16, 1), v ~ N(0, 1): every
// key's common component 16 (1, ..., 1) adds 16 sum_d q_d / sqrt(D) (about 128 at D = 64) to
// every score of a row. The oracle's scale (ring::attention_oracle, exact inputs) against an
// fp32 online softmax (the plain candidate), a flash ring (per block: bf16 P, the block's
// output in bf16, an fp32 log-sum-exp merge; the reference's cuDNN ring) and the same online
// softmax without the max (exp of the raw scores).
TEST(ToleranceModel, RingAttentionPassesFp32AndAFlashRingAndRejectsExpWithoutTheMax) {
  struct Case {
    int w, b, s, h, d;
  };
  for (const Case c : {Case{2, 2, 16, 2, 64}, Case{4, 2, 8, 2, 64}, Case{2, 1, 16, 1, 128}}) {
    SCOPED_TRACE("W=" + std::to_string(c.w) + " D=" + std::to_string(c.d));
    const int T = c.w * c.s, D = c.d;
    std::mt19937 g(54 + c.w + c.d);
    std::normal_distribution<float> nq(1, 1), nk(16, 1), nv(0, 1);
    const size_t n = size_t(c.b) * T * c.h * D;  // the whole sequence, [B, T, H, D]
    std::vector<float> q(n), k(n), v(n);
    for (size_t i = 0; i < n; ++i) q[i] = bf16(nq(g)), k[i] = bf16(nk(g)), v[i] = bf16(nv(g));
    const double sm = 1 / std::sqrt(double(D));
    std::vector<double> exact, scale, plain, flash, local;
    int rows = 0, rows_overflowing = 0;
    for (int bb = 0; bb < c.b; ++bb)
      for (int gpos = 0; gpos < T; ++gpos)
        for (int hh = 0; hh < c.h; ++hh) {
          auto at = [&](int j) { return ((size_t(bb) * T + j) * c.h + hh) * D; };
          const float* qi = &q[at(gpos)];
          const int rank = gpos / c.s;
          // The oracle: exact scores, softmax and the scale's terms.
          std::vector<double> sc(gpos + 1);
          double mx = -INFINITY, mag_max = 0, z = 0;
          for (int j = 0; j <= gpos; ++j) {
            double dot = 0, mag = 0;
            for (int e = 0; e < D; ++e) dot += double(qi[e]) * k[at(j) + e], mag += std::fabs(double(qi[e]) * k[at(j) + e]);
            sc[j] = dot * sm, mx = std::fmax(mx, sc[j]), mag_max = std::fmax(mag_max, mag * sm);
          }
          for (int j = 0; j <= gpos; ++j) z += std::exp(sc[j] - mx);
          // fp32 online softmax, with and without the running max.
          std::vector<float> acc(D, 0), raw(D, 0);
          float m = -INFINITY, l = 0, lraw = 0;
          for (int j = 0; j <= gpos; ++j) {
            float dot = 0;
            for (int e = 0; e < D; ++e) dot += qi[e] * k[at(j) + e];
            const float x = dot * float(sm), m2 = std::fmax(m, x), shrink = std::exp(m - m2), p = std::exp(x - m2);
            const float praw = std::exp(x);
            for (int e = 0; e < D; ++e) acc[e] = acc[e] * shrink + p * v[at(j) + e], raw[e] += praw * v[at(j) + e];
            l = l * shrink + p, lraw += praw, m = m2;
          }
          // The flash ring: one block per rank 0..rank, merged by log-sum-exp.
          std::vector<float> merged(D, 0), blk(D);
          float lacc = 0;
          for (int r = 0; r <= rank; ++r) {
            const int j0 = r * c.s, j1 = std::min(gpos, r * c.s + c.s - 1);
            std::vector<float> bs;
            float bm = -INFINITY, bz = 0;
            for (int j = j0; j <= j1; ++j) {
              float dot = 0;
              for (int e = 0; e < D; ++e) dot += qi[e] * k[at(j) + e];
              bs.push_back(dot * float(sm)), bm = std::fmax(bm, bs.back());
            }
            std::fill(blk.begin(), blk.end(), 0.0f);
            for (int j = j0; j <= j1; ++j) {
              const float e = std::exp(bs[j - j0] - bm), pb = bf16(e);
              bz += e;
              for (int d = 0; d < D; ++d) blk[d] += pb * v[at(j) + d];
            }
            const float lb = bm + std::log(bz);
            for (int d = 0; d < D; ++d) blk[d] = bf16(blk[d] / bz);
            if (r == 0) {
              merged = blk, lacc = lb;
            } else {
              const float hi = std::fmax(lacc, lb), lo = std::fmin(lacc, lb), lnew = hi + std::log1p(std::exp(lo - hi));
              const float wa = std::exp(lacc - lnew), wb = std::exp(lb - lnew);
              for (int d = 0; d < D; ++d) merged[d] = merged[d] * wa + blk[d] * wb;
              lacc = lnew;
            }
          }
          bool overflowed = false;
          for (int d = 0; d < D; ++d) {
            double o = 0, pv = 0, pv2 = 0, part = 0, blocks = 0, ol = 0, zl = 0;
            for (int j = 0; j <= gpos; ++j) {
              const double pj = std::exp(sc[j] - mx) / z, vj = v[at(j) + d];
              o += pj * vj, pv += pj * std::fabs(vj), pv2 += pj * pj * vj * vj, part += pj * vj;
              if (j == gpos || j % c.s == c.s - 1) blocks += std::fabs(part), part = 0;
              if (j >= rank * c.s) ol += std::exp(sc[j] - mx) * vj, zl += std::exp(sc[j] - mx);
            }
            exact.push_back(o);
            scale.push_back(std::fabs(o) + blocks + std::fmin(pv, 4 * std::sqrt(pv2)) +
                            (fp32_accumulation(T) + 2 * fp32_accumulation(D) * mag_max) * pv);
            plain.push_back(bf16(acc[d] / l)), flash.push_back(bf16(merged[d]));
            local.push_back(rank > 0 ? bf16(float(ol / zl)) : o);
            overflowed |= !std::isfinite(raw[d] / lraw);
          }
          rows++, rows_overflowing += overflowed;
        }
    EXPECT_EQ(misses(plain, exact, scale, 2 * 0.5), 0) << "within half the bound (factor 2)";
    EXPECT_EQ(misses(flash, exact, scale, 2 * 0.5), 0);
    EXPECT_GT(rows_overflowing, rows * 95 / 100) << "exp without the max overflows on nearly every row";
    EXPECT_GT(misses(local, exact, scale, 2), int(exact.size() / c.w) * (c.w - 1) * 9 / 10);  // the rows of ranks > 0
  }
}

// ring_attention_pp: a stage of CP blocks of S positions (B sequences, NH heads of D dims),
// the oracle's exact values and error parts (ind: a position's own, cor: possibly shared by
// positions) as ring_attention_pp/reference.cu computes them, and the implementations the
// bound must accept (the reference's cuDNN ring: bf16 P and block outputs, an fp32 merge;
// an fp32 attention) or reject (local only).
struct PipeShape {
  int B, CP, S, NH, D, DM;
  int T() const { return CP * S; }
  int E() const { return NH * D; }
};

struct PipeStage {
  std::vector<std::vector<float>> w, wo;  // per CP block: w_qkv [3E, DM], w_o [DM, E] (bf16 values)
};

struct PipeExact {
  std::vector<double> val, ind, cor, check;  // [B, T, DM]; check: the output's scale
};

// Exact stage output from exact input x (B, T, DM) with its error parts xi, xc (null: exact).
PipeExact pipe_exact(const PipeShape& s, const PipeStage& st, const std::vector<double>& x,
                     const std::vector<double>* xi, const std::vector<double>* xc) {
  const int B = s.B, T = s.T(), E = s.E(), DM = s.DM, D = s.D, H = s.NH, S = s.S;
  const double sm = 1 / std::sqrt(double(D)), lam = 4;
  std::vector<double> v3[3], i3[3], c3[3];  // q, k, v and their ind, cor: [B, T, E]
  for (int t = 0; t < 3; ++t) v3[t].assign(B * T * E, 0), i3[t].assign(B * T * E, 0), c3[t].assign(B * T * E, 0);
  for (int b = 0; b < B; ++b)
    for (int pos = 0; pos < T; ++pos) {
      const auto& w = st.w[pos / S];
      const int xr = (b * T + pos) * DM;
      for (int o = 0; o < 3 * E; ++o) {
        double p = 0, m = 0, vi = 0, vc = 0;
        for (int d = 0; d < DM; ++d) {
          const double wv = w[o * DM + d];
          p += x[xr + d] * wv, m += std::fabs(x[xr + d] * wv);
          if (xi) vi += (*xi)[xr + d] * (*xi)[xr + d] * wv * wv, vc += (*xc)[xr + d] * (*xc)[xr + d] * wv * wv;
        }
        const double own = std::fabs(p) + fp32_accumulation(DM) * m;
        const int at = (b * T + pos) * E + o % E;
        v3[o / E][at] = p, i3[o / E][at] = std::sqrt(own * own + vi), c3[o / E][at] = std::sqrt(vc);
      }
    }
  const auto &q = v3[0], &k = v3[1], &v = v3[2], &qi = i3[0], &ki = i3[1], &vi = i3[2], &qc = c3[0], &kc = c3[1],
             &vc = c3[2];
  std::vector<double> cx(B * T * E), ci(B * T * E), cc(B * T * E);
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h)
      for (int g = 0; g < T; ++g) {
        auto at = [&](int j) { return (b * T + j) * E + h * D; };
        const int qa = at(g);
        std::vector<double> sc(g + 1), sqi(g + 1), sqc(g + 1), ski(g + 1), skc(g + 1);
        double mx = -INFINITY, mag_max = 0;
        for (int j = 0; j <= g; ++j) {
          double dot = 0, mag = 0, a = 0, bq = 0, ck = 0, dk = 0;
          for (int d = 0; d < D; ++d) {
            const double kk = k[at(j) + d] * k[at(j) + d], qq = q[qa + d] * q[qa + d];
            dot += q[qa + d] * k[at(j) + d], mag += std::fabs(q[qa + d] * k[at(j) + d]);
            a += qi[qa + d] * qi[qa + d] * kk, bq += qc[qa + d] * qc[qa + d] * kk;
            ck += qq * ki[at(j) + d] * ki[at(j) + d], dk += qq * kc[at(j) + d] * kc[at(j) + d];
          }
          sc[j] = dot * sm, mx = std::fmax(mx, sc[j]), mag_max = std::fmax(mag_max, mag * sm);
          sqi[j] = sm * std::sqrt(a), sqc[j] = sm * std::sqrt(bq), ski[j] = sm * std::sqrt(ck),
          skc[j] = sm * std::sqrt(dk);
        }
        double z = 0;
        for (int j = 0; j <= g; ++j) z += std::exp(sc[j] - mx);
        for (int d = 0; d < D; ++d) {
          double o = 0, pv = 0, pv2 = 0, part = 0, blk2 = 0, vi2 = 0, vcl = 0;
          for (int j = 0; j <= g; ++j) {
            const double pj = std::exp(sc[j] - mx) / z, vj = v[at(j) + d];
            o += pj * vj, pv += pj * std::fabs(vj), pv2 += pj * pj * vj * vj, part += pj * vj;
            vi2 += pj * pj * vi[at(j) + d] * vi[at(j) + d], vcl += pj * vc[at(j) + d];
            if (j == g || j % S == S - 1) blk2 += part * part, part = 0;
          }
          double qpi = 0, qpc = 0, kpi2 = 0, kpc = 0;
          for (int j = 0; j <= g; ++j) {
            const double a = std::exp(sc[j] - mx) / z * std::fabs(v[at(j) + d] - o);
            qpi += a * sqi[j], qpc += a * sqc[j], kpi2 += a * a * ski[j] * ski[j], kpc += a * skc[j];
          }
          cx[qa + d] = o;
          ci[qa + d] = std::sqrt(o * o + blk2 + pv2 + qpi * qpi);
          cc[qa + d] = (fp32_accumulation(T) + 2 * fp32_accumulation(D) * mag_max) * pv +
                       std::sqrt(vi2 + vcl * vcl + qpc * qpc + kpi2 + kpc * kpc);
        }
      }
  PipeExact r;
  r.val.assign(B * T * DM, 0), r.ind = r.cor = r.check = r.val;
  for (int b = 0; b < B; ++b)
    for (int pos = 0; pos < T; ++pos) {
      const auto& wo = st.wo[pos / S];
      for (int o = 0; o < DM; ++o) {
        double y = 0, m = 0, yi = 0, yc = 0;
        for (int e = 0; e < E; ++e) {
          const int a = (b * T + pos) * E + e;
          const double w = wo[o * E + e];
          y += cx[a] * w, m += std::fabs(cx[a] * w), yi += ci[a] * ci[a] * w * w, yc += cc[a] * cc[a] * w * w;
        }
        const int a = (b * T + pos) * DM + o;
        r.val[a] = y;
        r.ind[a] = std::fabs(y) + fp32_accumulation(E) * m + std::sqrt(yi);
        r.cor[a] = std::sqrt(yc);
        r.check[a] = std::fabs(y) + fp32_accumulation(E) * m + lam * std::sqrt(yi + yc);
      }
    }
  return r;
}

// The wrong implementations the bound must reject: the rank's own block of keys only (no
// communication), the diagonal block without its causal mask (a query sees the later keys of
// its block), the scores not scaled by 1 / sqrt(D).
enum class PipeMistake { kNone, kLocalOnly, kNotCausal, kUnscaled };

// An implementation's stage from its bf16 input x: qkv in bf16; per CP block (the diagonal
// one causal) flash-style with P and the block output rounded to bf16 and merged in fp32 by
// log-sum-exp (`flash`), or one fp32 softmax over every key; ctx and y rounded to bf16.
std::vector<float> pipe_impl(const PipeShape& s, const PipeStage& st, const std::vector<float>& x, bool flash,
                             PipeMistake mistake = PipeMistake::kNone) {
  const int B = s.B, T = s.T(), E = s.E(), DM = s.DM, D = s.D, H = s.NH, S = s.S;
  const bool local_only = mistake == PipeMistake::kLocalOnly;
  const float sm = mistake == PipeMistake::kUnscaled ? 1.0f : 1 / std::sqrt(float(D));
  std::vector<float> qkv(size_t(B) * T * 3 * E), ctx(size_t(B) * T * E), y(size_t(B) * T * DM);
  for (int b = 0; b < B; ++b)
    for (int pos = 0; pos < T; ++pos)
      for (int o = 0; o < 3 * E; ++o) {
        float acc = 0;
        for (int d = 0; d < DM; ++d) acc += x[(b * T + pos) * DM + d] * st.w[pos / S][o * DM + d];
        qkv[(b * T + pos) * 3 * E + o] = bf16(acc);
      }
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h)
      for (int g = 0; g < T; ++g) {
        const float* qg = &qkv[(b * T + g) * 3 * E + h * D];
        auto kj = [&](int j) { return &qkv[(b * T + j) * 3 * E + E + h * D]; };
        const int first = local_only ? g / S : 0;
        std::vector<float> acc(D, 0);
        float acc_lse = 0;
        bool started = false;
        for (int blk = g / S; blk >= first; --blk) {  // the diagonal block first, as the ring
          const bool diagonal = blk == g / S;
          const int j0 = flash ? blk * S : first * S,
                    j1 = diagonal && mistake != PipeMistake::kNotCausal ? g : (blk + 1) * S - 1;
          if (!flash && blk != g / S) break;  // fp32: one softmax over keys j0 .. g
          std::vector<float> sc(j1 - j0 + 1);
          float mb = -INFINITY;
          for (int j = j0; j <= j1; ++j) {
            float dot = 0;
            for (int d = 0; d < D; ++d) dot += qg[d] * kj(j)[d];
            sc[j - j0] = dot * sm, mb = std::fmax(mb, sc[j - j0]);
          }
          float l = 0;
          std::vector<float> o(D, 0);
          for (int j = j0; j <= j1; ++j) {
            const float pe = std::exp(sc[j - j0] - mb), pr = flash ? bf16(pe) : pe;
            l += pe;
            for (int d = 0; d < D; ++d) o[d] += pr * kj(j)[E + d];
          }
          const float lse = mb + std::log(l);
          float wa = 0, wb = 1, la = lse;
          if (started) {
            const float hi = std::fmax(acc_lse, lse), lo = std::fmin(acc_lse, lse),
                        m = hi + std::log1p(std::exp(lo - hi));
            wa = std::exp(acc_lse - m), wb = std::exp(lse - m), la = m;
          }
          for (int d = 0; d < D; ++d) acc[d] = (started ? acc[d] * wa : 0) + (flash ? bf16(o[d] / l) : o[d] / l) * wb;
          acc_lse = la, started = true;
        }
        for (int d = 0; d < D; ++d) ctx[(b * T + g) * E + h * D + d] = bf16(acc[d]);
      }
  for (int b = 0; b < B; ++b)
    for (int pos = 0; pos < T; ++pos)
      for (int o = 0; o < DM; ++o) {
        float acc = 0;
        for (int e = 0; e < E; ++e) acc += ctx[(b * T + pos) * E + e] * st.wo[pos / S][o * E + e];
        y[(b * T + pos) * DM + o] = bf16(acc);
      }
  return y;
}

// One drawn case of the pipeline at shape s: both stages' weights, stage 0's and stage 1's
// own hidden_states, and the oracle's two stages (stage 1 from stage 0's exact output).
const PipeShape kPipeShapes[] = {{2, 3, 5, 2, 64, 196}, {2, 2, 8, 2, 64, 512}, {3, 1, 7, 3, 32, 96}};

std::vector<double> as_double(const std::vector<float>& v) { return std::vector<double>(v.begin(), v.end()); }

struct PipeCase {
  PipeStage st[2];
  std::vector<float> x0, own1;
  PipeExact e0, e1;

  PipeCase(const PipeShape& s, uint32_t seed) {
    std::mt19937 g(5600 + seed);
    for (auto& stage : st)
      for (int c = 0; c < s.CP; ++c) {
        stage.w.push_back(random_bf16(g, size_t(3) * s.E() * s.DM, 0.02f));  // problem.json's stds
        stage.wo.push_back(random_bf16(g, size_t(s.DM) * s.E(), 0.3f));
      }
    const size_t n = size_t(s.B) * s.T() * s.DM;
    x0 = random_bf16(g, n), own1 = random_bf16(g, n);
    e0 = pipe_exact(s, st[0], as_double(x0), nullptr, nullptr);
    e1 = pipe_exact(s, st[1], e0.val, &e0.ind, &e0.cor);
  }
};

// Both stages: the reference's roundings and an fp32 attention pass, within half the bound, at
// stage 0 and at stage 1 (which starts from the implementation's own bf16 stage-0 output, the
// oracle from the exact one); zeros fail nearly everywhere; the local-only degenerate fails at stage 1 and on the CP
// blocks after the first at stage 0.
TEST(ToleranceModel, TheAttentionPipelinePassesTheReferencesRoundingsAndFp32AndRejectsLocalOnly) {
  for (const auto& s : kPipeShapes)
    for (uint32_t seed : {1u, 2u, 3u}) {
      SCOPED_TRACE("CP=" + std::to_string(s.CP) + " DM=" + std::to_string(s.DM) + " seed " + std::to_string(seed));
      const PipeCase pc(s, seed);
      const size_t n = pc.x0.size();
      for (bool flash : {true, false}) {
        const auto y0 = pipe_impl(s, pc.st[0], pc.x0, flash), y1 = pipe_impl(s, pc.st[1], y0, flash);
        // By a margin: within half the allowance (factor 1 instead of problem.json's 2).
        EXPECT_EQ(misses(as_double(y0), pc.e0.val, pc.e0.check, 1), 0) << flash;
        EXPECT_EQ(misses(as_double(y1), pc.e1.val, pc.e1.check, 1), 0) << flash;
      }
      const std::vector<double> zeros(n, 0);
      EXPECT_GT(misses(zeros, pc.e0.val, pc.e0.check, 2), int(n) * 3 / 4);
      EXPECT_GT(misses(zeros, pc.e1.val, pc.e1.check, 2), int(n) * 3 / 4);
      const auto l0 = as_double(pipe_impl(s, pc.st[0], pc.x0, true, PipeMistake::kLocalOnly)),
                 l1 = as_double(pipe_impl(s, pc.st[1], pc.own1, true, PipeMistake::kLocalOnly));
      EXPECT_GT(misses(l1, pc.e1.val, pc.e1.check, 2), int(n) * 3 / 4);
      if (s.CP > 1) {  // rows of blocks c >= 1: every sequence's positions S .. T - 1
        std::vector<double> got, exact, scale;
        for (size_t i = 0; i < n; ++i)
          if ((i / s.DM) % s.T() >= size_t(s.S))
            got.push_back(l0[i]), exact.push_back(pc.e0.val[i]), scale.push_back(pc.e0.check[i]);
        EXPECT_GT(misses(got, exact, scale, 2), int(got.size()) / 2);
      }
    }
}

// Near misses, with problem.json's input distributions, where the scores are small (w_qkv
// std 0.02) and softmax is near uniform. Stage 0: the diagonal block without its mask and
// unscaled scores each miss the bound (factor 2) on more than 5 % of the elements (one miss
// fails a candidate; the margin says it is no accident of one draw). Stage 1 alone, from
// stage 0's right output: the missing mask misses as widely (over 50 %); unscaled scores may
// not, the scores being smaller still there (0 % at DM = 96, 1-17 % at DM = 196 and at tiny's
// shape, over 50 % at DM = 512), so a kernel that forgets the scale is caught at its stage-0
// ranks, which run the same code.
TEST(ToleranceModel, TheAttentionPipelineRejectsAMissingMaskAndUnscaledScores) {
  std::vector<PipeShape> shapes(std::begin(kPipeShapes), std::end(kPipeShapes));
  shapes.push_back({1, 2, 32, 2, 64, 256});  // tiny's T = 64 and DM at CP = 2
  for (const auto& s : shapes)
    for (uint32_t seed : {1u, 2u, 3u}) {
      SCOPED_TRACE("CP=" + std::to_string(s.CP) + " DM=" + std::to_string(s.DM) + " seed " + std::to_string(seed));
      const PipeCase pc(s, seed);
      const int n = int(pc.x0.size());
      const auto right0 = pipe_impl(s, pc.st[0], pc.x0, true);
      for (PipeMistake m : {PipeMistake::kNotCausal, PipeMistake::kUnscaled}) {
        const int m0 = misses(as_double(pipe_impl(s, pc.st[0], pc.x0, true, m)), pc.e0.val, pc.e0.check, 2);
        EXPECT_GT(m0, n / 20) << int(m) << ": stage 0 misses " << m0 << " of " << n;
        const int m1 = misses(as_double(pipe_impl(s, pc.st[1], right0, true, m)), pc.e1.val, pc.e1.check, 2);
        if (m == PipeMistake::kNotCausal) {
          EXPECT_GT(m1, n / 20) << "stage 1 alone misses " << m1 << " of " << n;
        }
      }
    }
}

// gnn/feature_exchange_all2all_backward: a seed row is the fp32 sum of the c received rows
// that name it, in any order (atomics, sorted segments, a sparse product); the oracle's scale
// is fp32_accumulation(c - 1) sum |terms| in units of u32, the factor 2.
double scatter_scale(const std::vector<float>& t) {
  const double n = t.empty() ? 0 : double(t.size() - 1);
  double mag = 0;
  for (float x : t) mag += std::fabs(double(x));
  return std::fmin(n, 4 * std::sqrt(n)) * mag;
}
bool scatter_ok(double got, const std::vector<float>& t, double exact) {
  return std::fabs(got - exact) <= 2 * std::ldexp(1.0, -24) * scatter_scale(t) + 1e-30;
}
TEST(ToleranceModel, TheScatterAddPassesEveryOrderAndRejectsBf16TermsAndLostDuplicates) {
  std::mt19937 g(7);
  std::normal_distribution<float> d(0, 1);
  double worst = 0;
  int bf16_misses = 0, lost_misses = 0, rows = 0;
  for (int c : {1, 2, 3, 4, 8, 16, 17, 32, 48}) {
    for (int trial = 0; trial < 2000; ++trial) {
      std::vector<float> t(c);
      for (auto& x : t) x = d(g);
      double exact = 0;
      for (float x : t) exact += x;
      const double allowed = 2 * std::ldexp(1.0, -24) * scatter_scale(t) + 1e-30;
      // Orders: as drawn, by magnitude up and down, shuffled (atomics), pairwise (a tree).
      std::vector<std::vector<float>> orders = {t, t, t, t};
      std::sort(orders[1].begin(), orders[1].end(), [](float a, float b) { return std::fabs(a) < std::fabs(b); });
      std::sort(orders[2].begin(), orders[2].end(), [](float a, float b) { return std::fabs(a) > std::fabs(b); });
      std::shuffle(orders[3].begin(), orders[3].end(), g);
      for (const auto& o : orders) {
        float s = 0;  // zero-initialised output, then one add per term
        for (float x : o) s += x;
        worst = std::max(worst, std::fabs(double(s) - exact) / allowed);
      }
      std::vector<float> p = t;
      while (p.size() > 1) {
        std::vector<float> q;
        for (size_t i = 0; i + 1 < p.size(); i += 2) q.push_back(p[i] + p[i + 1]);
        if (p.size() % 2) q.push_back(p.back());
        p = q;
      }
      worst = std::max(worst, std::fabs(double(c ? p[0] : 0.0f) - exact) / allowed);
      // Rejected: the terms rounded to bf16; one duplicate stored over instead of added.
      float sb = 0;
      for (float x : t) sb += bf16(x);
      bf16_misses += !scatter_ok(sb, t, exact);
      if (c >= 2) {
        float sl = 0;
        for (int i = 1; i < c; ++i) sl += t[i];
        lost_misses += !scatter_ok(sl, t, exact);
      }
      ++rows;
    }
  }
  EXPECT_LE(worst, 0.5) << "a legitimate order used more than half the bound";
  EXPECT_GT(bf16_misses, rows * 9 / 10) << "bf16 terms";
  EXPECT_EQ(lost_misses, rows - 2000) << "a lost duplicate";
}

// losses/openclip_contrastive_loss: rank 0's SigLIP loss against every rank's text block, its
// bound 2 u32 S with S as the reference's oracle builds it (statement, "Correctness").
struct SiglipModel {
  int w, b, d;
  double scale, neg_bias;
  std::vector<float> image;               // rank 0's, b x d
  std::vector<std::vector<float>> text;   // every rank's, b x d
  std::vector<float> c32;                 // fp32 logits (sequential fp32 dot products), w blocks of b x b
  double exact = 0, s = 0;

  SiglipModel(int w_, int b_, int d_, double scale_, double neg_bias_, uint32_t seed)
      : w(w_), b(b_), d(d_), scale(scale_), neg_bias(neg_bias_) {
    std::mt19937 g(seed);
    const float sd = float(1 / std::sqrt(double(d)));
    image = random_bf16(g, size_t(b) * d, sd);
    for (int r = 0; r < w; ++r) text.push_back(random_bf16(g, size_t(b) * d, sd));
    const double a_d = std::fmin(d, 4 * std::sqrt(double(d)));
    const double n = double(w) * b * b, a_n = std::fmin(n, 4 * std::sqrt(n));
    for (int r = 0; r < w; ++r)
      for (int i = 0; i < b; ++i)
        for (int j = 0; j < b; ++j) {
          double c = 0, m = 0;
          float f32 = 0;
          for (int k = 0; k < d; ++k) {
            const double p = double(image[size_t(i) * d + k]) * text[r][size_t(j) * d + k];
            c += p, m += std::fabs(p), f32 += float(p);
          }
          c32.push_back(f32);
          const double z = scale * c - neg_bias, y = r == 0 && i == j ? -z : z;
          const double f = y > 0 ? y + std::log1p(std::exp(-y)) : std::log1p(std::exp(y));
          exact += f;
          s += (scale * (a_d * m + std::fabs(c)) + std::fabs(z)) / (1 + std::exp(-y)) + (a_n + 4) * f + 1;
        }
    exact /= b;
    s = s / b + 2 * std::fabs(exact);
  }
  // The fp32 terms of the blocks in `ranks` (the positives on block 0's diagonal), from the
  // fp32 logits, or with them rounded to bf16, or with the log-sigmoid as the log of a bf16 sigmoid.
  std::vector<float> terms(const std::vector<int>& ranks, bool bf16_logits = false, bool bf16_sigmoid = false) const {
    std::vector<float> t;
    for (int r : ranks)
      for (int q = 0; q < b * b; ++q) {
        float z = float(scale) * c32[size_t(r) * b * b + q] - float(neg_bias);
        if (bf16_logits) z = bf16(z);
        const float y = r == 0 && q % (b + 1) == 0 ? -z : z;
        t.push_back(bf16_sigmoid ? -std::log(bf16(1.0f / (1.0f + std::exp(y))))
                                 : (y > 0 ? y + std::log1p(std::exp(-y)) : std::log1p(std::exp(y))));
      }
    return t;
  }
  std::vector<int> all() const {
    std::vector<int> r(w);
    for (int i = 0; i < w; ++i) r[i] = i;
    return r;
  }
  // |loss - exact| / bound for a sum of the terms (as terms() lists them: block by block, row
  // by row) of one of these orders: kRows, each image row's W B terms added in fp32, then the
  // rows' sums one by one (rows and terms shuffled with `shuffle`); kTree, pairwise; kRunning,
  // one running fp32 sum over all terms in order.
  enum Order { kRows, kTree, kRunning };
  double err(const std::vector<float>& t, Order order, uint32_t shuffle = 0) const {
    float sum = 0;
    if (order == kRunning) {
      for (float x : t) sum += x;
    } else if (order == kTree) {
      std::vector<float> p = t;
      while (p.size() > 1) {
        std::vector<float> q;
        for (size_t i = 0; i + 1 < p.size(); i += 2) q.push_back(p[i] + p[i + 1]);
        if (p.size() % 2) q.push_back(p.back());
        p = q;
      }
      sum = p[0];
    } else {
      const size_t blocks = t.size() / (size_t(b) * b);
      std::vector<int> rows(b);
      for (int i = 0; i < b; ++i) rows[i] = i;
      std::mt19937 g(shuffle);
      if (shuffle) std::shuffle(rows.begin(), rows.end(), g);
      for (int i : rows) {
        std::vector<float> row;
        for (size_t r = 0; r < blocks; ++r)
          for (int j = 0; j < b; ++j) row.push_back(t[(r * b + i) * b + j]);
        if (shuffle) std::shuffle(row.begin(), row.end(), g);
        float row_sum = 0;
        for (float x : row) row_sum += x;
        sum += row_sum;
      }
    }
    return std::fabs(double(sum / float(b)) - exact) / (2 * std::ldexp(1.0, -24) * s);
  }
};

TEST(ToleranceModel, TheSiglipLossPassesRowAndTreeSumsAndRejectsAMissingBlockBf16LogitsAndOneRunningSum) {
  struct Preset {
    int b, d;
    double scale, neg_bias;
  };
  // tiny, small, pkb and a narrower odd (B 333 -> 57) at W = 2 and 3.
  const Preset presets[] = {{16, 64, 10, 10}, {64, 256, 20, 8}, {128, 1024, 10, 10}, {57, 1001, 37, 7}};
  double worst = 0;
  int bf16_logit_misses = 0, cases = 0;
  for (const Preset& p : presets)
    for (int w : {2, 3})
      for (uint32_t trial = 0; trial < 3; ++trial) {
        const SiglipModel m(w, p.b, p.d, p.scale, p.neg_bias, 1000 * w + 10 * trial + uint32_t(p.b));
        const std::vector<float> t = m.terms(m.all());
        worst = std::max({worst, m.err(t, SiglipModel::kRows), m.err(t, SiglipModel::kRows, trial + 1),
                          m.err(t, SiglipModel::kTree)});
        std::vector<int> missing = m.all();
        missing.pop_back();  // the last rank's block left out
        EXPECT_GT(m.err(m.terms(missing), SiglipModel::kTree), 2.5) << "a missing block, B = " << p.b << ", W = " << w;
        EXPECT_GT(m.err(m.terms(m.all(), false, true), SiglipModel::kTree), 5) << "bf16 sigmoid, B = " << p.b;
        // One running fp32 sum stagnates: at pkb's logit bias of -10 every negative term (about
        // 5e-5) is below half the spacing of a sum past about 750, and vanishes.
        if (p.b == 128) EXPECT_GT(m.err(t, SiglipModel::kRunning), 1) << "one running sum, W = " << w;
        bf16_logit_misses += m.err(m.terms(m.all(), true), SiglipModel::kTree) > 1;
        ++cases;
      }
  EXPECT_LE(worst, 0.5) << "a legitimate order used more than half the bound";
  EXPECT_GT(bf16_logit_misses, cases / 2) << "bf16 logits (ParallelKernelBench's) mostly fail";
}

// deepmd_kalman_filter_optimizer (fp64): the exact step in double-double, the oracle's scale
// (statement.md), and the step as the reference, a sequential kernel, PyTorch's op order and
// near misses compute it. Ratios are |got - exact| / (u S), exact rounded to a double as the
// oracle stores it.
struct Kalman {
  struct DD {
    double hi, lo;
  };
  static DD two_sum(double a, double b) {
    const double s = a + b, bb = s - a;
    return {s, (a - (s - bb)) + (b - bb)};
  }
  static DD quick(double a, double b) {
    const double s = a + b;
    return {s, b - (s - a)};
  }
  static DD add(DD a, double b) {
    DD s = two_sum(a.hi, b);
    s.lo += a.lo;
    return quick(s.hi, s.lo);
  }
  static DD add(DD a, DD b) {
    DD s = two_sum(a.hi, b.hi);
    const DD t = two_sum(a.lo, b.lo);
    s.lo += t.hi;
    s = quick(s.hi, s.lo);
    s.lo += t.lo;
    return quick(s.hi, s.lo);
  }
  static DD mul(DD a, double b) {
    const double p = a.hi * b;
    return quick(p, std::fma(a.hi, b, -p) + a.lo * b);
  }
  static DD mul(DD a, DD b) {
    const double p = a.hi * b.hi;
    return quick(p, std::fma(a.hi, b.hi, -p) + a.hi * b.lo + a.lo * b.hi);
  }
  static DD div(DD a, double b) {  // two quotient digits from exact remainders
    const double q1 = a.hi / b;
    const DD r = add(a, DD{-q1 * b, -std::fma(q1, b, -q1 * b)});
    return add(DD{q1, 0}, r.hi / b);
  }
  static double value(DD a) { return a.hi + a.lo; }

  static constexpr double kLambda = 0.98, kU = 0x1p-53;
  int W, NB, B;
  std::vector<double> H, w, e, P;           // [W NB B], [W NB B], [W], [W NB B B]
  std::vector<DD> K;                        // exact K per row of every rank
  std::vector<double> C;                    // sum_k |P H| per row
  DD A{0, 0};
  double alpha = 0;

  Kalman(int w_, int nb, int b, uint32_t seed) : W(w_), NB(nb), B(b) {
    std::mt19937_64 g(seed);
    std::normal_distribution<double> n01(0, 1);
    const size_t rows = size_t(W) * NB * B;
    H.resize(rows), w.resize(rows), e.resize(W), P.resize(rows * B), K.resize(rows), C.resize(rows);
    for (auto& x : H) x = 0.01 * n01(g);
    for (auto& x : w) x = n01(g);
    for (auto& x : e) x = n01(g);
    for (auto& x : P) x = n01(g);
    for (size_t q = 0; q < rows; ++q) {
      DD acc{0, 0};
      for (int k = 0; k < B; ++k) {
        const double p = P[q * B + k] * H[q / B * B + k];
        acc = add(acc, DD{p, std::fma(P[q * B + k], H[q / B * B + k], -p)});
        C[q] += std::fabs(p);
      }
      K[q] = acc;
    }
    DD tmp{0, 0};
    double hk = 0, walk = 0, mag = 0;
    for (int b = 0; b < W * NB; ++b) {
      DD s{0, 0};
      for (int j = 0; j < B; ++j) {
        const size_t q = size_t(b) * B + j;
        s = add(s, mul(K[q], H[q]));
        hk += std::fabs(H[q] * K[q].hi);
        walk += std::pow(H[q] * C[q], 2);
      }
      const DD term = add(s, kLambda);
      tmp = add(tmp, term);
      mag += std::fabs(term.hi);
    }
    const double q1 = 1 / tmp.hi;  // 1 / tmp to double-double accuracy (one Newton step)
    A = add(DD{q1, 0}, q1 * (1 - value(tmp) * q1));
    A = quick(A.hi, A.lo);
    const double n1 = W * NB - 1;
    alpha = 1 + (hk + 4 * std::sqrt(walk) + std::fmin(n1, 4 * std::sqrt(n1)) * mag) / tmp.hi;
  }

  // How a kernel computes the step: K's order, tmp's, and the update's operations.
  struct Way {
    double (*dot)(const double* a, const double* b, int n, int stride_a);
    double (*p_next)(double p, double A, double kj, double kk);
    double (*w_next)(double w, double A, double e, double kj);
    bool lambda_once = false, local_tmp = false;
  };
  static double lanes(const double* a, const double* b, int n, int sa) {  // 32 lanes, then a tree
    double p[32] = {};
    for (int k = 0; k < n; ++k) p[k % 32] = std::fma(a[size_t(k) * sa], b[k], p[k % 32]);
    for (int o = 16; o; o /= 2)
      for (int l = 0; l < o; ++l) p[l] += p[l + o];
    return p[0];
  }
  static double sequential(const double* a, const double* b, int n, int sa) {
    double acc = 0;
    for (int k = 0; k < n; ++k) acc = std::fma(a[size_t(k) * sa], b[k], acc);
    return acc;
  }
  static double in_fp32(const double* a, const double* b, int n, int sa) {
    float acc = 0;
    for (int k = 0; k < n; ++k) acc += float(a[size_t(k) * sa] * b[k]);
    return acc;
  }

  // The largest |got - exact| / (u S) over rank r's P' and every rank's w' (first, second).
  std::pair<double, double> worst(const Way& way, int r, bool transposed = false) const {
    std::vector<double> k(size_t(W) * NB * B);
    for (size_t q = 0; q < k.size(); ++q) {
      const size_t blk = q / B, j = q % B;
      k[q] = transposed ? way.dot(&P[blk * B * B + j], &H[blk * B], B, B) : way.dot(&P[q * B], &H[blk * B], B, 1);
    }
    std::vector<double> local(W, 0.0);
    for (int s = 0; s < W; ++s)
      for (int i = 0; i < NB; ++i) {
        const size_t b = size_t(s) * NB + i;
        local[s] += (way.lambda_once ? 0.0 : kLambda) + lanes(&H[b * B], &k[b * B], B, 1);
      }
    double tmp = way.lambda_once ? kLambda : 0.0;
    for (int s = 0; s < W; ++s) tmp += way.local_tmp && s != r ? 0.0 : local[s];
    const double a = 1 / tmp;
    double wp = 0, ww = 0;
    for (size_t q = size_t(r) * NB * B; q < size_t(r + 1) * NB * B; ++q)
      for (int c = 0; c < B; ++c) {
        const size_t qk = q / B * B + c;
        const DD t = mul(mul(A, K[q]), K[qk]);
        const double p = P[q * B + c], exact = value(div(add(DD{-t.hi, -t.lo}, p), kLambda));
        const double S = (std::fabs(p) + (1 + alpha) * std::fabs(t.hi) +
                          A.hi * (std::fabs(K[q].hi) * C[qk] + std::fabs(K[qk].hi) * C[q])) / kLambda;
        wp = std::max(wp, std::fabs(way.p_next(p, a, k[q], k[qk]) - exact) / (kU * S));
      }
    for (size_t q = 0; q < k.size(); ++q) {
      const double es = e[q / (size_t(NB) * B)];
      const double exact = value(add(mul(mul(A, es), K[q]), w[q]));
      const double S = std::fabs(w[q]) + (1 + alpha) * std::fabs(A.hi * es * K[q].hi) + A.hi * std::fabs(es) * C[q];
      ww = std::max(ww, std::fabs(way.w_next(w[q], a, es, k[q]) - exact) / (kU * S));
    }
    return {wp, ww};
  }
};

double fused_p(double p, double a, double kj, double kk) { return std::fma(-(a * kj), kk, p) / Kalman::kLambda; }
double torch_p(double p, double a, double kj, double kk) { return (1 / Kalman::kLambda) * (p - a * (kj * kk)); }
double fused_w(double w, double a, double e, double kj) { return std::fma(a * e, kj, w); }
double torch_w(double w, double a, double e, double kj) { return w + (a * e) * kj; }

TEST(ToleranceModel, TheKalmanStepPassesTheReferencesOrderAndOthersAndRejectsNearMisses) {
  constexpr double kFactor = 6;
  for (const auto& [w, nb, b, seed] : {std::tuple{2, 4, 64, 1u}, {3, 3, 251, 2u}, {4, 2, 512, 3u}}) {
    const Kalman m(w, nb, b, seed);
    for (int r : {0, w - 1}) {
      const Kalman::Way reference{Kalman::lanes, fused_p, fused_w};
      const auto [p, ww] = m.worst(reference, r);
      EXPECT_LE(p, 0.5 * kFactor) << w << " " << b;  // the reference within half the bound
      EXPECT_LE(ww, 0.5 * kFactor) << w << " " << b;
      for (const Kalman::Way& other : {Kalman::Way{Kalman::sequential, fused_p, fused_w},
                                       Kalman::Way{Kalman::sequential, torch_p, torch_w}}) {
        const auto [p2, w2] = m.worst(other, r);
        EXPECT_LE(p2, kFactor);
        EXPECT_LE(w2, kFactor);
      }
      auto missed = [&](const Kalman::Way& way, bool transposed = false) {
        const auto [p3, w3] = m.worst(way, r, transposed);
        return std::min(p3, w3) > 1e3 * kFactor;  // both outputs miss, by far
      };
      EXPECT_TRUE(missed({Kalman::lanes, fused_p, fused_w, /*lambda_once=*/true}));
      EXPECT_TRUE(missed({Kalman::lanes, fused_p, fused_w, false, /*local_tmp=*/true}));
      EXPECT_TRUE(missed({Kalman::lanes, fused_p, fused_w}, /*transposed=*/true));
      EXPECT_TRUE(missed({Kalman::in_fp32, fused_p, fused_w}));
      EXPECT_GT(m.worst({Kalman::lanes, [](double p, double a, double kj, double kk) { return p - a * kj * kk; }, fused_w}, r)
                    .first, 1e3 * kFactor);  // no division by lambda
      EXPECT_GT(m.worst({Kalman::lanes, [](double p, double a, double kj, double kk) { return (p + a * kj * kk) / Kalman::kLambda; },
                         fused_w}, r)
                    .first, 1e3 * kFactor);  // the correction's sign flipped
    }
  }
}

// fft/distributed_rfft2 and fft/distributed_irfft2: |got - exact| <= 8 log2(H WD) u32 S, S the
// RMS of the plane's (extended) spectrum or field. A mixed-radix Cooley-Tukey FFT (radices 4,
// 2, 3, 5, 7; twiddles computed in fp64 and rounded once) in T, the way the references split
// the 2-D transform into passes; in float it is the fp32 FFT the bound must admit, in double
// the exact value.
template <class T>
void fft_pass(std::complex<T>* a, int64_t n, int64_t stride, int sign) {
  if (n == 1) return;
  int64_t p = 0;
  for (int64_t q : {4, 2, 3, 5, 7})
    if (n % q == 0) {
      p = q;
      break;
    }
  ASSERT_NE(p, 0) << n;  // the shapes below are 7-smooth
  const int64_t m = n / p;
  std::vector<std::complex<T>> sub(n);
  for (int64_t s = 0; s < p; ++s)
    for (int64_t j = 0; j < m; ++j) sub[s * m + j] = a[(j * p + s) * stride];
  for (int64_t s = 0; s < p; ++s) fft_pass(sub.data() + s * m, m, 1, sign);
  auto root = [&](int64_t e, int64_t len) {
    const double t = sign * 2 * M_PI * double(e % len) / double(len);
    return std::complex<T>(T(std::cos(t)), T(std::sin(t)));
  };
  for (int64_t k = 0; k < m; ++k) {
    std::complex<T> t[7];
    for (int64_t s = 0; s < p; ++s) t[s] = s ? sub[s * m + k] * root(s * k, n) : sub[k];
    for (int64_t q = 0; q < p; ++q) {
      std::complex<T> acc = t[0];
      for (int64_t s = 1; s < p; ++s) acc += t[s] * root(s * q, p);
      a[(k + q * m) * stride] = acc;
    }
  }
}

// The 2-D transform of an h x w row-major plane, rows first or columns first; `between`
// may round the intermediate (a lower-precision buffer between the passes).
template <class T>
void fft2(std::vector<std::complex<T>>& z, int64_t h, int64_t w, int sign, bool rows_first,
          std::function<std::complex<T>(std::complex<T>)> between = nullptr) {
  auto rows = [&] { for (int64_t r = 0; r < h; ++r) fft_pass(z.data() + r * w, w, 1, sign); };
  auto cols = [&] { for (int64_t c = 0; c < w; ++c) fft_pass(z.data() + c, h, w, sign); };
  rows_first ? rows() : cols();
  if (between) for (auto& v : z) v = between(v);
  rows_first ? cols() : rows();
}

constexpr double kU32 = 0x1p-24;

// The largest |got - exact| / (8 log2(h w) u32 S) over the elements.
double fft_error_over_bound(const std::vector<double>& got, const std::vector<double>& exact, double s, int64_t n) {
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i)
    worst = std::max(worst, std::fabs(got[i] - exact[i]) / (8 * std::log2(double(n)) * kU32 * s));
  return worst;
}

TEST(ToleranceModel, TheRfft2BoundPassesFp32FftsInEitherPassOrderAndRejectsNearMisses) {
  std::mt19937 g(59);
  std::normal_distribution<float> d(0, 1);
  for (auto [h, w] : {std::pair<int64_t, int64_t>{32, 48}, {70, 90}, {105, 135}, {256, 256}}) {
    SCOPED_TRACE(std::to_string(h) + " x " + std::to_string(w));
    const int64_t nf = w / 2 + 1;
    std::vector<std::complex<float>> xf(h * w);
    std::vector<std::complex<double>> xd(h * w);
    double sum_sq = 0;
    for (int64_t i = 0; i < h * w; ++i) {
      const float v = d(g);
      xf[i] = v, xd[i] = v, sum_sq += double(v) * v;
    }
    const double s = std::sqrt(sum_sq / double(h * w)), ortho = 1 / std::sqrt(double(h * w));
    fft2(xd, h, w, -1, true);
    // The half-spectrum as the output stores it: (re, im) pairs of the first nf columns.
    auto half = [&](const auto& z, double scale, bool conj) {
      std::vector<double> out;
      for (int64_t r = 0; r < h; ++r)
        for (int64_t f = 0; f < nf; ++f) {
          const auto v = z[r * w + f];
          out.push_back(double(v.real()) * scale);
          out.push_back(double(v.imag()) * scale * (conj ? -1 : 1));
        }
      return out;
    };
    const std::vector<double> exact = half(xd, ortho, false);
    for (bool rows_first : {false, true}) {  // the references: columns (H) first
      auto z = xf;
      fft2(z, h, w, -1, rows_first);
      for (auto& v : z) v *= float(ortho);  // scaled once in fp32
      EXPECT_LE(fft_error_over_bound(half(z, 1, false), exact, s, h * w), 0.5) << rows_first;
    }
    auto bf = xf;  // the intermediate between the passes rounded to bf16
    fft2<float>(bf, h, w, -1, false, [](std::complex<float> v) { return std::complex<float>(bf16(v.real()), bf16(v.imag())); });
    EXPECT_GT(fft_error_over_bound(half(bf, ortho, false), exact, s, h * w), 1);
    EXPECT_GT(fft_error_over_bound(half(xd, ortho, true), exact, s, h * w), 1);            // conjugated
    EXPECT_GT(fft_error_over_bound(half(xd, 1.0 / double(h * w), false), exact, s, h * w), 1);  // norm="forward"
  }
}

TEST(ToleranceModel, TheIrfft2BoundPassesTheExtensionAndTheWeightingAndRejectsAnUnconjugatedMirror) {
  std::mt19937 g(60);
  std::normal_distribution<float> d(0, std::sqrt(0.5f));
  for (auto [h, w] : {std::pair<int64_t, int64_t>{16, 32}, {90, 126}, {135, 189}, {128, 256}}) {
    SCOPED_TRACE(std::to_string(h) + " x " + std::to_string(w));
    const int64_t nf = w / 2 + 1;
    std::vector<std::complex<float>> x(h * nf);  // a drawn half-spectrum: columns 0 and w / 2 not Hermitian
    for (auto& v : x) v = {d(g), d(g)};
    auto c = [&](int64_t f) { return f == 0 || 2 * f == w ? 1.0 : 2.0; };
    double sum_sq = 0;
    for (int64_t i = 0; i < h * nf; ++i) sum_sq += c(i % nf) * std::norm(std::complex<double>(x[i]));
    const double s = std::sqrt(sum_sq / double(h * w)), ortho = 1 / std::sqrt(double(h * w));
    // Z by the statement's Hermitian extension, or the rows weighted by c_w and zero-padded.
    auto extended = [&](bool conj) {
      std::vector<std::complex<double>> z(h * w);
      for (int64_t k = 0; k < h; ++k)
        for (int64_t f = 0; f < w; ++f) {
          const std::complex<double> v = f < nf ? x[k * nf + f] : x[((h - k) % h) * nf + (w - f)];
          z[k * w + f] = f >= nf && conj ? std::conj(v) : v;
        }
      return z;
    };
    auto weighted = [&] {
      std::vector<std::complex<double>> z(h * w);
      for (int64_t k = 0; k < h; ++k)
        for (int64_t f = 0; f < nf; ++f) z[k * w + f] = c(f) * std::complex<double>(x[k * nf + f]);
      return z;
    };
    auto real_part = [&](const auto& z, double scale) {
      std::vector<double> out;
      for (const auto& v : z) out.push_back(double(v.real()) * scale);
      return out;
    };
    auto exact_z = extended(true);
    fft2(exact_z, h, w, +1, true);
    const std::vector<double> exact = real_part(exact_z, ortho);
    auto exact_w = weighted();  // the two definitions agree
    fft2(exact_w, h, w, +1, true);
    EXPECT_LE(fft_error_over_bound(real_part(exact_w, ortho), exact, s, h * w), 1e-6);
    for (auto z64 : {extended(true), weighted()}) {
      std::vector<std::complex<float>> z(z64.begin(), z64.end());
      fft2(z, h, w, +1, true);  // the references: along WD first
      for (auto& v : z) v *= float(ortho);
      EXPECT_LE(fft_error_over_bound(real_part(z, 1), exact, s, h * w), 0.5);
    }
    auto unconj = extended(false);
    fft2(unconj, h, w, +1, true);
    EXPECT_GT(fft_error_over_bound(real_part(unconj, ortho), exact, s, h * w), 1);
  }
}

// conv/hyena_forward_cp, with the FFT models above:
// |got - exact| <= 2 u S with S = |out| + |x1| (|y| + 4 sqrt(sum (h z)^2 + (b z)^2)
// + a(n) (sum |h z| + |b z|) + 2^-16 16 log2(2L) ||z|| sqrt(||h||^2 + b^2) / sqrt(L)).
// One row: the reference's roundings (z to bf16, an fp32 mixed-radix FFT convolution at a
// 7-smooth length >= L + K - 1 with the bias folded into tap 0, y to bf16, x1 y to bf16)
// and a direct fp32 sum with z kept in fp32 pass; a missing bias and a circular convolution
// (an FFT of length L) do not.
TEST(ToleranceModel, TheHyenaLongConvPassesFftAndDirectSumsAndRejectsNoBiasAndAWrap) {
  std::mt19937 g(72);
  std::normal_distribution<float> d(0, 1);
  for (auto [L, K, N] : {std::tuple<int64_t, int64_t, int64_t>{1024, 512, 1536}, {2016, 999, 3024}, {4096, 4096, 8192}}) {
    SCOPED_TRACE(std::to_string(L) + " " + std::to_string(K));
    std::vector<float> x1(L), z(L), zr(L), h(K);
    for (int64_t t = 0; t < L; ++t) {
      x1[t] = bf16(d(g));
      z[t] = bf16(d(g)) * bf16(d(g));  // exact in fp32
      zr[t] = bf16(z[t]);              // PyTorch's bf16 product
    }
    for (auto& v : h) v = bf16(d(g) / std::sqrt(float(K)));
    const float b = bf16(d(g));
    std::vector<double> exact(L), scale(L);
    double zz = 0, hh = double(b) * b;
    for (float v : z) zz += double(v) * v;
    for (float v : h) hh += double(v) * v;
    const double fft_term = 0x1p-16 * 16 * std::log2(2.0 * L) * std::sqrt(zz * hh / L);
    for (int64_t t = 0; t < L; ++t) {
      double y = double(b) * z[t], mag = std::fabs(y), sq = y * y;
      const int64_t taps = std::min(t, K - 1) + 1;
      for (int64_t s = 0; s < taps; ++s) {
        const double p = double(h[s]) * z[t - s];
        y += p, mag += std::fabs(p), sq += p * p;
      }
      exact[t] = double(x1[t]) * y;
      scale[t] = std::fabs(exact[t]) +
                 std::fabs(x1[t]) * (std::fabs(y) + 4 * std::sqrt(sq) + fp32_accumulation(taps + 1) * mag + fft_term);
    }
    auto worst = [&](const std::vector<float>& y) {  // y: the convolution's fp32 result
      double w = 0;
      for (int64_t t = 0; t < L; ++t)
        w = std::max(w, std::fabs(double(bf16(x1[t] * bf16(y[t]))) - exact[t]) / (2 * kU * scale[t]));
      return w;
    };
    auto fft_conv = [&](const std::vector<float>& zin, int64_t n, bool bias) {
      std::vector<std::complex<float>> a(n), f(n);
      for (int64_t t = 0; t < L; ++t) a[t] = zin[t];
      for (int64_t s = 0; s < std::min(K, n); ++s) f[s] = h[s] + (s == 0 && bias ? b : 0.0f);
      fft_pass(a.data(), n, 1, -1);
      fft_pass(f.data(), n, 1, -1);
      for (int64_t k = 0; k < n; ++k) a[k] *= f[k] * (1.0f / float(n));
      fft_pass(a.data(), n, 1, +1);
      std::vector<float> y(L);
      for (int64_t t = 0; t < L; ++t) y[t] = a[t].real();
      return y;
    };
    EXPECT_LE(worst(fft_conv(zr, N, true)), 0.5);  // the reference
    std::vector<float> direct(L);                  // z in fp32, taps summed in fp32 in order
    for (int64_t t = 0; t < L; ++t) {
      float acc = b * z[t];
      for (int64_t s = 0; s <= std::min(t, K - 1); ++s) acc += h[s] * z[t - s];
      direct[t] = acc;
    }
    EXPECT_LE(worst(direct), 0.5);
    EXPECT_GT(worst(fft_conv(zr, N, false)), 1);  // no skip term
    EXPECT_GT(worst(fft_conv(zr, L, true)), 1);   // circular: an FFT of length L wraps
  }
}

}  // namespace
}  // namespace mgk::problems
