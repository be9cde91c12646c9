// Mutant of tests/gpu/candidates/dp/clip_grad_norm_no_ep.cu. Class: wrong elementwise function.
// The total of the squares is used as the norm (the square root forgotten after the reduction).
//
// The plain candidate's description:
// Plain: each rank sums the squares of its three gradients in fp32 (per-block partials, then
// one block adds them) into its slot of symmetric workspace; after a barrier every rank adds
// every rank's slot in rank order, takes the square root, writes the norm and scales its
// gradients in place by 1 / norm (max_norm = 1) when the norm exceeds 1.
#include "../../../candidates/plain_compute.cuh"

namespace {
constexpr int kThreads = 256, kPartials = 512;

__global__ void partial_kernel(const __nv_bfloat16* g0, const __nv_bfloat16* g1, const __nv_bfloat16* g2, int64_t n,
                               float* partial) {
  __shared__ float part[kThreads];
  const __nv_bfloat16* g[3] = {g0, g1, g2};
  float acc = 0;
  for (int64_t i = blockIdx.x * int64_t(kThreads) + threadIdx.x; i < 3 * n; i += int64_t(gridDim.x) * kThreads) {
    const float v = __bfloat162float(g[i / n][i % n]);
    acc += v * v;
  }
  part[threadIdx.x] = acc;
  __syncthreads();
  for (int w = kThreads / 2; w; w /= 2) {
    if (threadIdx.x < w) part[threadIdx.x] += part[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[blockIdx.x] = part[0];
}

__global__ void local_sum_kernel(const float* partial, float* slot) {
  float acc = 0;
  for (int b = 0; b < kPartials; ++b) acc += partial[b];
  *slot = acc;
}

__global__ void clip_kernel(void* const* slots, int first, int end, float* norm_out, __nv_bfloat16* g0,
                            __nv_bfloat16* g1, __nv_bfloat16* g2, int64_t n) {
  float total = 0;
  for (int r = first; r < end; ++r) total += *static_cast<const float*>(slots[r]);
  const float norm = total;
  if (blockIdx.x == 0 && threadIdx.x == 0) *norm_out = norm;
  if (!(norm > 1.0f)) return;
  __nv_bfloat16* g[3] = {g0, g1, g2};
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < 3 * n; i += int64_t(gridDim.x) * blockDim.x) {
    __nv_bfloat16* p = g[i / n] + i % n;
    *p = __float2bfloat16(__bfloat162float(*p) / norm);
  }
}
}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) { return plain::setup(ctx, {sizeof(float)}, {kPartials * sizeof(float)}); }
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { plain::teardown(ctx); }

// out[1..3] are the buffers of in[0..2] (in place).
MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  plain::State& st = plain::state(ctx);
  const int64_t n = in[0].numel;
  auto* partial = static_cast<float*>(st.local[0]);
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // no peer still reads this rank's slot of the last call
  partial_kernel<<<kPartials, kThreads, 0, s>>>(static_cast<const __nv_bfloat16*>(in[0].data),
                                                static_cast<const __nv_bfloat16*>(in[1].data),
                                                static_cast<const __nv_bfloat16*>(in[2].data), n, partial);
  MGK_LAUNCH_CHECK(ctx);
  local_sum_kernel<<<1, 1, 0, s>>>(partial, static_cast<float*>(st.sym[0].local));
  MGK_LAUNCH_CHECK(ctx);
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every rank's slot is written
  clip_kernel<<<plain::blocks_for(3 * n), 256, 0, s>>>(
      st.sym[0].peers, plain::first_source(ctx), plain::end_source(ctx), static_cast<float*>(out[0].data),
      static_cast<__nv_bfloat16*>(out[1].data), static_cast<__nv_bfloat16*>(out[2].data),
      static_cast<__nv_bfloat16*>(out[3].data), n);
  MGK_LAUNCH_CHECK(ctx);
  return 0;
}
