// What the two delayed-scaling references share (problems/quant/fp8_allgather_params and
// fp8_reduce_scatter_grads): ParallelKernelBench's amax history, scale and e4m3 round trip on
// the reference's side, the amax and the exact e4m3 value on the oracle's; and DelayedScaling,
// the reference (on the reference kit) both derive from. Kept beside the problems, so the
// model sees it with the reference that includes it.
#pragma once
#include <cub/cub.cuh>
#include <cuda_fp8.h>

#include <algorithm>

#include "mgk/fp8.cuh"
#include "mgk/reference_kit.h"

namespace quant {

constexpr float kE4m3Max = 448.0f;
constexpr float kNoSatLimit = 464.0f;  // largest |q| that still rounds to 448 (a tie, to even)

struct Abs {
  __device__ float operator()(__nv_bfloat16 v) const { return fabsf(__bfloat162float(v)); }
};

// float8_e4m3fn(q) as PyTorch casts (non-saturating RNE), then back to fp32 (exact).
__device__ float e4m3_round_trip(float q) {
  __nv_fp8_storage_t b = __nv_cvt_float_to_fp8(q, __NV_SATFINITE, __NV_E4M3);
  if (fabsf(q) > kNoSatLimit) b = __nv_fp8_storage_t(0x7F | (signbit(q) ? 0x80 : 0));
  return __half2float(__half(__nv_cvt_fp8_to_halfraw(b, __NV_E4M3)));
}

// The history update and the scale: one warp, slot k per lane k (H <= 32).
__global__ void history_kernel(const __nv_bfloat16* hist, int h, float* amax_scale, __nv_bfloat16* new_hist) {
  const int k = threadIdx.x;
  float v = -INFINITY;
  if (k < h) {
    const __nv_bfloat16 slot = k + 1 < h ? hist[k + 1] : __float2bfloat16_rn(amax_scale[0]);
    new_hist[k] = slot;
    v = __bfloat162float(slot);
  }
  for (int o = 16; o; o /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  // clamp(min=1e-12) on the bf16 max, in fp32 and rounded back to bf16, then to fp32 / 448.
  if (k == 0) amax_scale[1] = __fdiv_rn(__bfloat162float(__float2bfloat16_rn(fmaxf(v, 1e-12f))), kE4m3Max);
}

__global__ void round_trip_kernel(const __nv_bfloat16* x, __nv_bfloat16* y, int64_t n, const float* amax_scale) {
  const float scale = amax_scale[1];
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const float q = __fdiv_rn(__bfloat162float(x[i]), scale);
    y[i] = __float2bfloat16_rn(__fmul_rn(e4m3_round_trip(q), scale));
  }
}

int grid_for(mgk_ctx* ctx, int64_t n) { return int(std::max<int64_t>(1, std::min<int64_t>((n + 255) / 256, int64_t(ctx->num_sms) * 16))); }

// ---- the oracle's side

constexpr int kOracleThreads = 256;

// partial[r * kPartials + b]: block b's share of max |x| of rank r = blockIdx.y (x: input `g`).
template <int kPartials>
__global__ void amax_partial_kernel(mgk_input_gen g, int64_t n, double* partial) {
  __shared__ double part[kOracleThreads];
  const int r = blockIdx.y;
  double m = 0;
  for (int64_t i = blockIdx.x * int64_t(kOracleThreads) + threadIdx.x; i < n; i += int64_t(gridDim.x) * kOracleThreads)
    m = fmax(m, fabs(mgk::gen_value(g, r, i)));
  part[threadIdx.x] = m;
  __syncthreads();
  for (int w = kOracleThreads / 2; w; w /= 2) {
    if (threadIdx.x < w) part[threadIdx.x] = fmax(part[threadIdx.x], part[threadIdx.x + w]);
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[r * kPartials + blockIdx.x] = part[0];
}

// The e4m3 value nearest q (an fp32 value), ties to even, NaN beyond 464: CUDA's
// non-saturating conversion of the double, the format's definition (tests/sandbox/fp8_test.cc
// checks the same conversion, saturating, against it).
__device__ double e4m3_exact(double q) {
  return mgk::fp8_to_double(MGK_E4M3, uint8_t(__nv_cvt_double_to_fp8(q, __NV_NOSAT, __NV_E4M3)));
}

// x through the round trip with `scale`, exactly as the reference rounds it: x / scale to
// fp32, its e4m3 value, the product with scale to fp32, then to bf16.
__device__ double recon_exact(double x, double scale) {
  const double deq = e4m3_exact(double(float(x / scale)));
  return mgk::round_to(MGK_BF16, double(float(deq * scale)));
}

// The reference both derive from: what they keep (amax and scale on the device, CUB's temp
// for the amax) and the steps they share (the amax, history and round trip of run; every
// rank's scale in the oracle). A reference reads P and H (at most a warp of history).
struct DelayedScaling : mgk::Reference {
  using Reference::Reference;
  const int64_t P = dim("P"), H = dim("H");
  mgk::DeviceBuffer<float> amax;  // [0] amax, [1] scale
  mgk::DeviceBuffer<char> temp;   // CUB's, for the amax
  size_t temp_bytes = 0;

  // The amax and CUB's temp for the amax of n elements.
  int setup_amax(int64_t n) {
    if (H > 32) return mgk::set_error(ctx, "history longer than a warp");
    MGK_CUDA_TRY(ctx, amax.allocate(2));
    const auto* none = static_cast<const __nv_bfloat16*>(nullptr);  // CUB only sizes its temp
    MGK_CUDA_TRY(ctx, cub::DeviceReduce::TransformReduce(nullptr, temp_bytes, none, amax.get(), n,
                                                         cuda::maximum<float>(), Abs(), 0.0f));
    MGK_CUDA_TRY(ctx, temp.allocate(std::max<size_t>(temp_bytes, 16)));
    return 0;
  }

  // amax = max |x| over the n elements of in[0] (CUB); the rolled history of in[1] into out[1]
  // and the scale; x through the e4m3 round trip into y.
  int round_trip(const mgk_tensor* in, const mgk_tensor* out, int64_t n, __nv_bfloat16* y, cudaStream_t st) {
    const auto* x = static_cast<const __nv_bfloat16*>(in[0].data);
    MGK_CUDA_TRY(ctx, cub::DeviceReduce::TransformReduce(temp.get(), temp_bytes, x, amax.get(), n,
                                                         cuda::maximum<float>(), Abs(), 0.0f, st));
    history_kernel<<<1, 32, 0, st>>>(static_cast<const __nv_bfloat16*>(in[1].data), int(in[1].numel), amax,
                                     static_cast<__nv_bfloat16*>(out[1].data));
    MGK_LAUNCH_CHECK(ctx);
    round_trip_kernel<<<grid_for(ctx, n), 256, 0, st>>>(x, y, n, amax);
    MGK_LAUNCH_CHECK(ctx);
    return 0;
  }

  // Every rank q's scale ((*scale_out)[q], fp32 values as doubles, W of them in `scratch`) from
  // its regenerated inputs: amax over the `n` elements of input 0, the rolled history of input
  // 1 (h slots) with amax last, its max clamped at 1e-12 and rounded to bf16, over 448 in
  // fp32; this rank's rolled history lands in expected[1]. 0, or the error already set on ctx.
  template <int kPartials>
  int oracle_scales(const mgk_oracle_args* a, mgk::oracle::Scratch& scratch, int64_t n, double** scale_out,
                    cudaStream_t st) {
    const int h = int(a->inputs[1].numel);
    const mgk_input_gen g = a->gens[0], hg = a->gens[1];
    double* e_hist = static_cast<double*>(a->expected[1]);
    const int W = world(), R = rank();
    double* partial = scratch.get<double>(int64_t(W) * kPartials);
    double* scale = scratch.get<double>(W);
    if (!scratch.ok()) return mgk::set_error(ctx, "oracle: out of device memory");
    *scale_out = scale;
    amax_partial_kernel<kPartials><<<dim3(kPartials, W), kOracleThreads, 0, st>>>(g, n, partial);
    MGK_LAUNCH_CHECK(ctx);
    MGK_CUDA_TRY(ctx, mgk::oracle::for_each(
                          W,
                          [=] __device__(int64_t q) {
                            double amax = 0;
                            for (int b = 0; b < kPartials; ++b) amax = fmax(amax, partial[q * kPartials + b]);
                            double m = -INFINITY;
                            for (int k = 0; k < h; ++k) {
                              const double slot = k + 1 < h ? mgk::gen_value(hg, int(q), k + 1) : amax;
                              if (q == R) e_hist[k] = slot;
                              m = fmax(m, slot);
                            }
                            m = mgk::round_to(MGK_BF16, fmax(m, double(1e-12f)));
                            scale[q] = double(float(m / 448.0));
                          },
                          st));
    return 0;
  }
};

}  // namespace quant
