// The two fp8 dtypes (e4m3 = float8_e4m3fn, e5m2) as bytes, for the harness (generating,
// poisoning, reading outputs) and for solutions and oracles: one rounding rule everywhere,
// CUDA's round-to-nearest-even conversion, saturating to the largest finite value (448 for
// e4m3, 57344 for e5m2) as float8_e4m3fn casts do in the frameworks; NaN stays NaN.
// Host and device; C++ through nvcc or a host compiler with the CUDA headers.
#pragma once
#include <cuda_fp8.h>
#include <stdint.h>

#include "mgk/dtype.h"

namespace mgk {

__host__ __device__ inline bool is_fp8(mgk_dtype t) { return t == MGK_E4M3 || t == MGK_E5M2; }

__host__ __device__ inline __nv_fp8_interpretation_t fp8_kind(mgk_dtype t) {
  return t == MGK_E5M2 ? __NV_E5M2 : __NV_E4M3;
}

// v rounded once (no double rounding through float) to the nearest fp8 value, ties to even.
__host__ __device__ inline uint8_t fp8_from_double(mgk_dtype t, double v) {
  return uint8_t(__nv_cvt_double_to_fp8(v, __NV_SATFINITE, fp8_kind(t)));
}

// Exact: every fp8 value is a half value.
__host__ __device__ inline double fp8_to_double(mgk_dtype t, uint8_t b) {
  __half_raw h = __nv_cvt_fp8_to_halfraw(__nv_fp8_storage_t(b), fp8_kind(t));
  return double(__half2float(__half(h)));
}

}  // namespace mgk
