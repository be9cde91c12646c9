// Mutant of tests/gpu/candidates/reduce.cu. Class: a missing term (one rank's share).
// The sum runs over W - 1 ranks (a ring's step count used as the term count).
#include "../../../candidates/simple_common.cuh"
SIMPLE_SETUP_TEARDOWN

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));
  if (ctx->rank == 0)
    MGK_CUDA_TRY(ctx, simple::sum(out[0].dtype, in[0].peers, ctx->world_size - 1, 0, out[0].data, out[0].numel, s));
  return 0;
}
