// Mutant of tests/gpu/candidates/reduce.cu. Class: off by one in a rank offset.
// The root is taken as W - 1 instead of rank 0: rank 0's output is never written.
#include "../../../candidates/simple_common.cuh"
SIMPLE_SETUP_TEARDOWN

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));
  if (ctx->rank == ctx->world_size - 1)
    MGK_CUDA_TRY(ctx, simple::sum(out[0].dtype, in[0].peers, ctx->world_size, 0, out[0].data, out[0].numel, s));
  return 0;
}
