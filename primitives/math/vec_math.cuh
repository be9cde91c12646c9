// Arithmetic on 16-byte vectors for reductions: 8 bf16 or 4 fp32 per uint4, accumulated in
// fp32 registers (a sum of W bf16 terms rounded once at the end, not W - 1 times).
#pragma once
#include "../common/base.cuh"

namespace mgk::prim {

MGK_DEV float bf16_bits_to_float(uint32_t bits16) { return __uint_as_float(bits16 << 16); }
MGK_DEV uint32_t float_to_bf16_bits(float f) { return __bfloat16_as_ushort(__float2bfloat16_rn(f)); }

// Element type T in 16-byte vectors: `lanes` elements per vector; `add` accumulates one
// vector into fp32 lanes, `pack` rounds the lanes back to one vector of T; `to_float` /
// `from_float` convert single elements held in their raw bits.
template <class T> struct vec_math;

template <> struct vec_math<__nv_bfloat16> {
  static constexpr int lanes = 8;
  using bits = unsigned short;
  static MGK_DEV void add(float (&acc)[lanes], uint4 v) {
    const uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      acc[2 * j] += __uint_as_float(w[j] << 16);
      acc[2 * j + 1] += __uint_as_float(w[j] & 0xffff0000u);
    }
  }
  static MGK_DEV uint4 pack(const float (&acc)[lanes]) {
    uint32_t w[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) w[j] = float_to_bf16_bits(acc[2 * j]) | (float_to_bf16_bits(acc[2 * j + 1]) << 16);
    return make_uint4(w[0], w[1], w[2], w[3]);
  }
  static MGK_DEV float to_float(bits b) { return bf16_bits_to_float(b); }
  static MGK_DEV bits from_float(float f) { return bits(float_to_bf16_bits(f)); }
};

template <> struct vec_math<float> {
  static constexpr int lanes = 4;
  using bits = uint32_t;
  static MGK_DEV void add(float (&acc)[lanes], uint4 v) {
    acc[0] += __uint_as_float(v.x);
    acc[1] += __uint_as_float(v.y);
    acc[2] += __uint_as_float(v.z);
    acc[3] += __uint_as_float(v.w);
  }
  static MGK_DEV uint4 pack(const float (&acc)[lanes]) {
    return make_uint4(__float_as_uint(acc[0]), __float_as_uint(acc[1]), __float_as_uint(acc[2]),
                      __float_as_uint(acc[3]));
  }
  static MGK_DEV float to_float(bits b) { return __uint_as_float(b); }
  static MGK_DEV bits from_float(float f) { return __float_as_uint(f); }
};

// a + b for two vectors of 8 bf16 (fp32 add, one rounding).
MGK_DEV uint4 add_bf16x8(uint4 a, uint4 b) {
  float acc[8] = {};
  vec_math<__nv_bfloat16>::add(acc, a);
  vec_math<__nv_bfloat16>::add(acc, b);
  return vec_math<__nv_bfloat16>::pack(acc);
}

// a + b for two vectors of 4 fp32.
MGK_DEV uint4 add_f32x4(uint4 a, uint4 b) {
  return make_uint4(__float_as_uint(__uint_as_float(a.x) + __uint_as_float(b.x)),
                    __float_as_uint(__uint_as_float(a.y) + __uint_as_float(b.y)),
                    __float_as_uint(__uint_as_float(a.z) + __uint_as_float(b.z)),
                    __float_as_uint(__uint_as_float(a.w) + __uint_as_float(b.w)));
}

}  // namespace mgk::prim
