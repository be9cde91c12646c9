// Input generation shared by the harness (which fills inputs) and the references'
// oracles (which regenerate any rank's input element to compute expected outputs without
// communication). Counter-based: value = f(seed, rank, index), so no state and any order.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <math.h>
#include <stdint.h>

#include "mgk/abi.h"
#include "mgk/fp8.cuh"

namespace mgk {

__host__ __device__ inline uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Uniform in (0, 1], 53 bits.
__host__ __device__ inline double unit(uint64_t bits) {
  return (double((bits >> 11) + 1)) * (1.0 / 9007199254740992.0);
}

__host__ __device__ inline double round_to(mgk_dtype t, double v) {
  switch (t) {
    case MGK_BF16: return double(__bfloat162float(__float2bfloat16_rn(float(v))));
    case MGK_F16: return double(__half2float(__float2half_rn(float(v))));
    case MGK_F32: return double(float(v));
    case MGK_E4M3: case MGK_E5M2: return fp8_to_double(t, fp8_from_double(t, v));
    case MGK_I32: case MGK_I64: case MGK_U8: return v;  // randint and zipf already integral
    default: return v;
  }
}

// A power-law offset in [0, n): the bounded continuous power law x ** -s on [1, n + 1],
// inverted at u in (0, 1] and floored, so P(j) ~ (j + 1) ** -s (the discrete Zipf law up to
// the flooring). u = 1 is the top of the range, clamped into it.
__host__ __device__ inline int64_t zipf_offset(double s, int64_t n, double u) {
  if (n <= 1) return 0;
  const double top = double(n + 1);
  const double x = fabs(s - 1.0) < 1e-9 ? pow(top, u) : pow(1.0 + u * (pow(top, 1.0 - s) - 1.0), 1.0 / (1.0 - s));
  const int64_t j = int64_t(floor(x)) - 1;
  return j < 0 ? 0 : j >= n ? n - 1 : j;
}

// What the special rows of mgk_input_gen make of element `i` (the same on every rank): 0 an
// ordinary element, 1 in a zero row, 2 in a tiny row, 3 in a massive row. The phase is
// below 2^30, so q never wraps.
enum { kOrdinaryRow = 0, kZeroRow = 1, kTinyRow = 2, kMassiveRow = 3 };
__host__ __device__ inline int special_row(const mgk_input_gen& g, int64_t i) {
  if (g.row <= 0 || (g.zero_every <= 0 && g.tiny_every <= 0 && g.massive_every <= 0) || i < 0) return kOrdinaryRow;
  const uint64_t q = uint64_t(i / g.row) + (mix64(g.seed ^ 0x2545f4914f6cdd1dull) >> 34);
  if (g.zero_every > 0 && q % uint64_t(g.zero_every) == 0) return kZeroRow;
  if (g.tiny_every > 0 && q % uint64_t(g.tiny_every) == uint64_t(g.tiny_every / 2)) return kTinyRow;
  if (g.massive_every > 0 && q % uint64_t(g.massive_every) == uint64_t(g.massive_every - 1)) return kMassiveRow;
  return kOrdinaryRow;
}

// The value the harness stored at element `i` of this input on rank `rank`.
__host__ __device__ inline double gen_value(const mgk_input_gen& g, int rank, int64_t i) {
  const int special = special_row(g, i);
  if (special == kZeroRow) return 0.0;  // +0 in every dtype
  uint64_t h = mix64(g.seed ^ mix64(uint64_t(rank) * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull));
  uint64_t r1 = mix64(h + uint64_t(i) * 2 + 1);
  double v;
  switch (g.dist) {
    case MGK_DIST_NORMAL: {
      uint64_t r2 = mix64(h + uint64_t(i) * 2 + 2);
      // Box-Muller; unit() is never 0 so the log is finite.
      double rad = sqrt(-2.0 * log(unit(r1)));
      v = g.a + g.b * rad * cos(6.283185307179586 * unit(r2));
      break;
    }
    case MGK_DIST_UNIFORM: v = g.a + (g.b - g.a) * (unit(r1) - 1e-300); break;
    case MGK_DIST_RANDINT: {
      uint64_t span = uint64_t(g.b - g.a);
      v = g.a + double(span ? r1 % span : 0);
      break;
    }
    case MGK_DIST_ZIPF: v = g.a + double(zipf_offset(g.exponent, int64_t(g.b - g.a), unit(r1))); break;
    default: v = 0;
  }
  if (special == kTinyRow) v *= g.tiny;
  if (special == kMassiveRow) v *= g.massive;
  return round_to(g.dtype, v);
}

// Stores v as element i of a `t` array, as the harness stores the inputs it draws. Host and
// device, so that a host test can prove store(gen_value) keeps exactly what an oracle
// regenerates.
__host__ __device__ inline void store_value(void* p, mgk_dtype t, int64_t i, double v) {
  switch (t) {
    case MGK_BF16: static_cast<__nv_bfloat16*>(p)[i] = __float2bfloat16_rn(float(v)); break;
    case MGK_F16: static_cast<__half*>(p)[i] = __float2half_rn(float(v)); break;
    case MGK_F32: static_cast<float*>(p)[i] = float(v); break;
    case MGK_F64: static_cast<double*>(p)[i] = v; break;
    case MGK_I32: static_cast<int32_t*>(p)[i] = int32_t(v); break;
    case MGK_I64: static_cast<int64_t*>(p)[i] = int64_t(v); break;
    case MGK_U8: static_cast<uint8_t*>(p)[i] = uint8_t(v); break;
    case MGK_E4M3: case MGK_E5M2: static_cast<uint8_t*>(p)[i] = fp8_from_double(t, v); break;
  }
}

}  // namespace mgk
