// Mutant of tests/gpu/candidates/reduce_scatter.cu. Class: a missing term (one rank's share).
// The sum runs over W - 1 ranks.
#include "../../../candidates/simple_common.cuh"
SIMPLE_SETUP_TEARDOWN

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  int64_t c = out[0].numel;
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));
  MGK_CUDA_TRY(ctx, simple::sum(out[0].dtype, in[0].peers, ctx->world_size - 1, int64_t(ctx->rank) * c, out[0].data, c, s));
  return 0;
}
