// Mutant of tests/gpu/candidates/dp/clip_grad_norm_ep.cu. Class: wrong elementwise function (the norm of e, not of e / EP).
// The squares are summed from the expert gradient before its averaging, as if averaging came after clipping (the norm of e, where the statement wants e').
//
// The plain candidate's description:
// Plain: each rank averages its expert gradient in place (e' = bf16(e * fp32(1/EP)), when
// EP > 1) while summing the squares of g and e' in fp32 (per-block partials, then one block
// adds them) into its two slots of symmetric workspace; after a barrier every rank adds
// every rank's slots in rank order (the world sums: no groups needed), takes the square root,
// writes the norm and scales g and e' in place by 1 / norm (max_norm = 1) when it exceeds 1.
#include "../../../candidates/plain_compute.cuh"

namespace {
constexpr int kThreads = 256, kPartials = 512;

// partial[b] and partial[kPartials + b]: block b's share of sum g^2 and of sum e'^2.
__global__ void partial_kernel(const __nv_bfloat16* g, __nv_bfloat16* e, int64_t n, int ep, float* partial) {
  __shared__ float part[2][kThreads];
  float acc[2] = {0, 0};
  for (int64_t i = blockIdx.x * int64_t(kThreads) + threadIdx.x; i < n; i += int64_t(gridDim.x) * kThreads) {
    const float a = __bfloat162float(g[i]);
    float b = __bfloat162float(e[i]);
    if (ep > 1) {
      e[i] = __float2bfloat16(b * (1.0f / float(ep)));
    }
    acc[0] += a * a;
    acc[1] += b * b;
  }
  part[0][threadIdx.x] = acc[0];
  part[1][threadIdx.x] = acc[1];
  __syncthreads();
  for (int w = kThreads / 2; w; w /= 2) {
    if (threadIdx.x < w)
      for (int k = 0; k < 2; ++k) part[k][threadIdx.x] += part[k][threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0)
    for (int k = 0; k < 2; ++k) partial[k * kPartials + blockIdx.x] = part[k][0];
}

__global__ void local_sums_kernel(const float* partial, float* slot) {
  for (int k = 0; k < 2; ++k) {
    float acc = 0;
    for (int b = 0; b < kPartials; ++b) acc += partial[k * kPartials + b];
    slot[k] = acc;
  }
}

__global__ void clip_kernel(void* const* slots, int first, int end, float* norm_out, __nv_bfloat16* g,
                            __nv_bfloat16* e, int64_t n) {
  float total[2] = {0, 0};
  for (int r = first; r < end; ++r)
    for (int k = 0; k < 2; ++k) total[k] += static_cast<const float*>(slots[r])[k];
  const float norm = sqrtf(total[0] + total[1]);
  if (blockIdx.x == 0 && threadIdx.x == 0) *norm_out = norm;
  if (!(norm > 1.0f)) return;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < 2 * n; i += int64_t(gridDim.x) * blockDim.x) {
    __nv_bfloat16* p = (i < n ? g : e) + i % n;
    *p = __float2bfloat16(__bfloat162float(*p) / norm);
  }
}
}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) { return plain::setup(ctx, {2 * sizeof(float)}, {2 * kPartials * sizeof(float)}); }
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { plain::teardown(ctx); }

// out[1], out[2] are the buffers of in[0], in[1] (in place).
MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  plain::State& st = plain::state(ctx);
  const int64_t n = in[0].numel;
  const int ep = int(mgk::dim(ctx, "EP"));
  auto* g = static_cast<__nv_bfloat16*>(out[1].data);
  auto* e = static_cast<__nv_bfloat16*>(out[2].data);
  auto* partial = static_cast<float*>(st.local[0]);
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // no peer still reads this rank's slots of the last call
  partial_kernel<<<kPartials, kThreads, 0, s>>>(g, e, n, ep, partial);
  MGK_LAUNCH_CHECK(ctx);
  local_sums_kernel<<<1, 1, 0, s>>>(partial, static_cast<float*>(st.sym[0].local));
  MGK_LAUNCH_CHECK(ctx);
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every rank's slots are written
  clip_kernel<<<plain::blocks_for(2 * n), 256, 0, s>>>(st.sym[0].peers, plain::first_source(ctx),
                                                      plain::end_source(ctx), static_cast<float*>(out[0].data), g, e, n);
  MGK_LAUNCH_CHECK(ctx);
  return 0;
}
