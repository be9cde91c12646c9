// Reference, as ParallelKernelBench's torch code computes it (delayed scaling): amax = max
// |shard| (CUB); the history rolled left by one with amax (bf16) in its last slot; scale =
// fp32(max(history)) / 448 (fp32 division); every element through an e4m3 round trip,
// bf16(fp32(e4m3(x / scale)) * scale), written straight into this rank's slot of the output;
// then an in-place NCCL all-gather of the reconstructed bf16 shards.
//
// The cast is float8_e4m3fn's: round to nearest even, NOT saturating (|q| > 464 is NaN, 448 <
// |q| <= 464 is 448). Here the hardware's saturating conversion plus an explicit NaN above
// 464 gives exactly those bits; with this scale |q| <= 448 (1 + 2^-23) anyway.
#include <cub/cub.cuh>
#include <cuda_fp8.h>

#include "mgk/fp8.cuh"
#include "mgk/oracle_gemm.cuh"  // oracle::for_each, oracle::Scratch
#include "mgk/reference.h"

namespace {

constexpr float kE4m3Max = 448.0f;
constexpr float kNoSatLimit = 464.0f;  // largest |q| that still rounds to 448 (a tie, to even)

struct Abs {
  __device__ float operator()(__nv_bfloat16 v) const { return fabsf(__bfloat162float(v)); }
};

struct State {
  float* amax = nullptr;  // [0] amax, [1] scale
  void* temp = nullptr;
  size_t temp_bytes = 0;
  ~State() {
    cudaFree(amax);
    cudaFree(temp);
  }
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

}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  auto* s = new State;
  ctx->state = s;
  if (mgk::dim(ctx, "H") > 32) return mgk::set_error(ctx, "history longer than a warp");
  MGK_CUDA_TRY(ctx, cudaMalloc(&s->amax, 2 * sizeof(float)));
  MGK_CUDA_TRY(ctx, cub::DeviceReduce::TransformReduce(nullptr, s->temp_bytes, static_cast<const __nv_bfloat16*>(nullptr),
                                                       s->amax, mgk::dim(ctx, "P"), cuda::maximum<float>(), Abs(), 0.0f));
  MGK_CUDA_TRY(ctx, cudaMalloc(&s->temp, std::max<size_t>(s->temp_bytes, 16)));
  return 0;
}

MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { delete static_cast<State*>(ctx->state); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t st) {
  auto& s = *static_cast<State*>(ctx->state);
  const int64_t P = in[0].numel;
  const auto* x = static_cast<const __nv_bfloat16*>(in[0].data);
  auto* full = static_cast<__nv_bfloat16*>(out[0].data);
  __nv_bfloat16* mine = full + ctx->rank * P;
  MGK_CUDA_TRY(ctx, cub::DeviceReduce::TransformReduce(s.temp, s.temp_bytes, x, s.amax, P, cuda::maximum<float>(), Abs(),
                                                       0.0f, st));
  history_kernel<<<1, 32, 0, st>>>(static_cast<const __nv_bfloat16*>(in[1].data), int(in[1].numel), s.amax,
                                   static_cast<__nv_bfloat16*>(out[1].data));
  MGK_LAUNCH_CHECK(ctx);
  round_trip_kernel<<<grid_for(ctx, P), 256, 0, st>>>(x, mine, P, s.amax);
  MGK_LAUNCH_CHECK(ctx);
  // In place: each rank's send buffer is its own slot of the gathered tensor.
  MGK_NCCL_STEP(ctx, ncclAllGather(mine, full, size_t(P), ncclBfloat16, mgk::comm(ctx), st));
  return 0;
}

namespace {
constexpr int kThreads = 256, kPartials = 64;

// partial[r * kPartials + b]: block b's share of max |shard| of rank r = blockIdx.y.
__global__ void amax_partial_kernel(mgk_input_gen g, int64_t n, double* partial) {
  __shared__ double part[kThreads];
  const int r = blockIdx.y;
  double m = 0;
  for (int64_t i = blockIdx.x * int64_t(kThreads) + threadIdx.x; i < n; i += int64_t(gridDim.x) * kThreads)
    m = fmax(m, fabs(mgk::gen_value(g, r, i)));
  part[threadIdx.x] = m;
  __syncthreads();
  for (int w = kThreads / 2; w; w /= 2) {
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
}  // namespace

// Exact, in fp64 from the regenerated inputs, per rank q: amax_q, the rolled history, its max
// M_q (clamped at 1e-12), scale_q = fp32(M_q / 448) (an fp64 quotient of fp32 values rounded
// once to fp32 is the correctly rounded fp32 quotient), x / scale_q likewise, its e4m3
// value, the fp32 product with scale_q (exact in fp64, then rounded to fp32) and its bf16
// rounding: bit for bit what the reference computes. Both outputs are compared exactly.
MGK_EXPORT int mgk_oracle(mgk_ctx* ctx, const mgk_oracle_args* a, cudaStream_t st) {
  const int W = ctx->world_size, R = ctx->rank;
  const int64_t P = mgk::dim(ctx, "P");
  const int h = int(a->inputs[1].numel);
  const mgk_input_gen g = a->gens[0], hg = a->gens[1];
  mgk::oracle::Scratch scratch(st);
  double* partial = scratch.get<double>(size_t(W) * kPartials);
  double* scale = scratch.get<double>(W);
  if (!scratch.ok()) return mgk::set_error(ctx, "oracle: out of device memory");
  amax_partial_kernel<<<dim3(kPartials, W), kThreads, 0, st>>>(g, P, partial);
  MGK_LAUNCH_CHECK(ctx);
  auto* e_hist = static_cast<double*>(a->expected[1]);
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
  auto* e = static_cast<double*>(a->expected[0]);
  MGK_CUDA_TRY(ctx, mgk::oracle::for_each(
                        int64_t(W) * P,
                        [=] __device__(int64_t i) {
                          const int q = int(i / P);
                          const double x = mgk::gen_value(g, q, i % P);
                          const double deq = e4m3_exact(double(float(x / scale[q])));
                          e[i] = mgk::round_to(MGK_BF16, double(float(deq * scale[q])));
                        },
                        st));
  return 0;
}
