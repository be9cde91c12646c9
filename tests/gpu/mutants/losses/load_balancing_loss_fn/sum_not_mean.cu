// Mutant of tests/gpu/candidates/losses/load_balancing_loss_fn.cu. Class: local instead of global normalisation (the mean over ranks).
// The ranks' losses are summed and not divided by W.
//
// The plain candidate's description:
// Plain: after a barrier, one block computes this rank's L_r in fp32 throughout (softmax,
// top-2 on the fp32 probabilities, the means) into symmetric workspace; after a second
// barrier every rank adds the ranks' L_r in rank order and divides by W.
#include "../../../candidates/plain_compute.cuh"

namespace {
constexpr int kE = 8, kThreads = 256;

__global__ void rank_loss_kernel(const __nv_bfloat16* logits, int64_t m, float* loss) {
  __shared__ float picks[kE], psum[kE];
  if (threadIdx.x < kE) picks[threadIdx.x] = 0, psum[threadIdx.x] = 0;
  __syncthreads();
  for (int64_t t = threadIdx.x; t < m; t += kThreads) {
    float p[kE], top = -INFINITY, sum = 0;
    for (int e = 0; e < kE; ++e) p[e] = __bfloat162float(logits[t * kE + e]), top = fmaxf(top, p[e]);
    for (int e = 0; e < kE; ++e) p[e] = expf(p[e] - top), sum += p[e];
    int first = 0;
    for (int e = 0; e < kE; ++e) p[e] /= sum, first = p[e] > p[first] ? e : first;
    int second = first == 0 ? 1 : 0;
    for (int e = 0; e < kE; ++e)
      if (e != first && p[e] > p[second]) second = e;
    for (int e = 0; e < kE; ++e) atomicAdd(&psum[e], p[e]);
    atomicAdd(&picks[first], 1.0f), atomicAdd(&picks[second], 1.0f);
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    float l = 0;
    for (int e = 0; e < kE; ++e) l += picks[e] / float(m) * (psum[e] / float(m));
    *loss = kE * l;
  }
}

__global__ void mean_kernel(void* const* losses, int first, int end, int world, float* out) {
  float acc = 0;
  for (int s = first; s < end; ++s) acc += *static_cast<const float*>(losses[s]);
  *out = acc;
}
}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  if (mgk::dim(ctx, "E") != kE || mgk::dim(ctx, "K") != 2) return mgk::set_error(ctx, "needs E = 8, K = 2");
  return plain::setup(ctx, {sizeof(float)});
}
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { plain::teardown(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  const mgk_sym_buffer& losses = plain::state(ctx).sym[0];
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // no peer still reads this rank's L_r of the last call
  rank_loss_kernel<<<1, kThreads, 0, s>>>(static_cast<const __nv_bfloat16*>(in[0].data), mgk::dim(ctx, "M"),
                                          static_cast<float*>(losses.local));
  MGK_LAUNCH_CHECK(ctx);
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every rank's L_r is written
  mean_kernel<<<1, 1, 0, s>>>(losses.peers, plain::first_source(ctx), plain::end_source(ctx), ctx->world_size,
                              static_cast<float*>(out[0].data));
  MGK_LAUNCH_CHECK(ctx);
  return 0;
}
