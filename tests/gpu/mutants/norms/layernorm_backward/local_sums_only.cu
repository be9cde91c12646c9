// Mutant of tests/gpu/candidates/norms/layernorm_backward.cu. Class: the communication skipped.
// Each rank writes its own column sums: the all-reduce of the parameter gradients over the sequence-parallel ranks dropped.
//
// The plain candidate's description:
// Plain: after a barrier, each rank writes its column sums (fp32, products not rounded)
// into symmetric workspace; after a second barrier each rank adds every rank's sums in rank
// order and rounds once.
#include "../../../candidates/plain_compute.cuh"

namespace {
__global__ void column_sums_kernel(const __nv_bfloat16* x, const __nv_bfloat16* dy, float* sums, int64_t m, int64_t n) {
  for (int64_t col = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; col < n; col += int64_t(gridDim.x) * blockDim.x) {
    float g = 0, b = 0;
    for (int64_t r = 0; r < m; ++r) {
      const float d = __bfloat162float(dy[r * n + col]);
      g += d * __bfloat162float(x[r * n + col]);
      b += d;
    }
    sums[col] = g;
    sums[n + col] = b;
  }
}

__global__ void combine_kernel(void* const* sums, int first, int end, int64_t n, __nv_bfloat16* d_gamma,
                               __nv_bfloat16* d_beta) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    float g = 0, b = 0;
    for (int r = first; r < end; ++r) {
      g += static_cast<const float*>(sums[r])[i];
      b += static_cast<const float*>(sums[r])[n + i];
    }
    d_gamma[i] = __float2bfloat16(g);
    d_beta[i] = __float2bfloat16(b);
  }
}
}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) { return plain::setup(ctx, {size_t(mgk::dim(ctx, "N")) * 2 * 4}); }
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { plain::teardown(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  const int64_t M = mgk::dim(ctx, "M"), N = mgk::dim(ctx, "N");
  const mgk_sym_buffer& sums = plain::state(ctx).sym[0];
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // no peer still reads this rank's sums of the last call
  column_sums_kernel<<<plain::blocks_for(N), 256, 0, s>>>(static_cast<const __nv_bfloat16*>(in[0].data),
                                                          static_cast<const __nv_bfloat16*>(in[1].data),
                                                          static_cast<float*>(sums.local), M, N);
  MGK_LAUNCH_CHECK(ctx);
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every rank's sums are written
  combine_kernel<<<plain::blocks_for(N), 256, 0, s>>>(sums.peers, ctx->rank, ctx->rank + 1, N,
                                                      static_cast<__nv_bfloat16*>(out[0].data),
                                                      static_cast<__nv_bfloat16*>(out[1].data));
  MGK_LAUNCH_CHECK(ctx);
  return 0;
}
