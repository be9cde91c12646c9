// tests/gpu/candidates/fp8_plain.cuh with four one-line bugs behind FP8_MUTANT (1: the amax
// history rolled right, 2: the scale from the current amax, history ignored, 3: the scale
// applied as x * s, 4: e5m2 for e4m3), for the mutants of the delayed-scaling problems beside
// it. Everything else is the plain candidate's code, unchanged.
//
// What the two delayed-scaling plain candidates share (quant/fp8_allgather_params and
// quant/fp8_reduce_scatter_grads): this rank's max |x| (per-block partials, then one thread),
// the rolled history and the scale (one thread), and every element's e4m3 round trip (CUDA's
// non-saturating round-to-nearest-even conversion, as float8_e4m3fn casts).
#pragma once
#include <cuda_fp8.h>

#include "../../candidates/plain_compute.cuh"

namespace fp8_plain {
#ifndef FP8_MUTANT
#error "define FP8_MUTANT (1-4) before including fp8_plain_mutable.cuh"
#endif
constexpr int kThreads = 256;

template <int kPartials>
__global__ void amax_partial_kernel(const __nv_bfloat16* x, int64_t n, float* partial) {
  __shared__ float part[kThreads];
  float m = 0;
  for (int64_t i = blockIdx.x * int64_t(kThreads) + threadIdx.x; i < n; i += int64_t(gridDim.x) * kThreads)
    m = fmaxf(m, fabsf(__bfloat162float(x[i])));
  part[threadIdx.x] = m;
  __syncthreads();
  for (int w = kThreads / 2; w; w /= 2) {
    if (threadIdx.x < w) part[threadIdx.x] = fmaxf(part[threadIdx.x], part[threadIdx.x + w]);
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[blockIdx.x] = part[0];
}

// new_hist = hist rolled left, amax last; scale[0] = fp32(bf16(max(max(new_hist), 1e-12))) / 448.
template <int kPartials>
__global__ void history_kernel(const float* partial, const __nv_bfloat16* hist, int h, __nv_bfloat16* new_hist,
                               float* scale) {
  float amax = 0;
  for (int b = 0; b < kPartials; ++b) amax = fmaxf(amax, partial[b]);
  float m = -INFINITY;
  for (int k = 0; k < h; ++k) {
#if FP8_MUTANT == 1  // the history rolled right: the new amax first, the oldest kept
    new_hist[k] = k == 0 ? __float2bfloat16(amax) : hist[k - 1];
#else
    new_hist[k] = k + 1 < h ? hist[k + 1] : __float2bfloat16(amax);
#endif
    m = fmaxf(m, __bfloat162float(new_hist[k]));
  }
#if FP8_MUTANT == 2  // current scaling: the scale from this call's amax, the history ignored
  m = amax;
#endif
  *scale = __bfloat162float(__float2bfloat16(fmaxf(m, 1e-12f))) / 448.0f;  // IEEE division (nvcc's default)
}

__global__ void round_trip_kernel(const __nv_bfloat16* x, __nv_bfloat16* y, int64_t n, const float* scale_p) {
  const float scale = *scale_p;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
#if FP8_MUTANT == 3  // the scale applied the wrong way round: x * s into fp8
    const __nv_fp8_storage_t q = __nv_cvt_float_to_fp8(__bfloat162float(x[i]) * scale, __NV_NOSAT, __NV_E4M3);
#elif FP8_MUTANT == 4  // e5m2 instead of e4m3 (with e4m3's 448 in the scale)
    const __nv_fp8_storage_t q = __nv_cvt_float_to_fp8(__bfloat162float(x[i]) / scale, __NV_NOSAT, __NV_E5M2);
#else
    const __nv_fp8_storage_t q = __nv_cvt_float_to_fp8(__bfloat162float(x[i]) / scale, __NV_NOSAT, __NV_E4M3);
#endif
#if FP8_MUTANT == 4
    const float deq = __half2float(__half(__nv_cvt_fp8_to_halfraw(q, __NV_E5M2)));
#else
    const float deq = __half2float(__half(__nv_cvt_fp8_to_halfraw(q, __NV_E4M3)));
#endif
    y[i] = __float2bfloat16(deq * scale);
  }
}
}  // namespace fp8_plain
