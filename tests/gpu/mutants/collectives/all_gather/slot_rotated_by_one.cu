// Mutant of tests/gpu/candidates/all_gather.cu. Class: off by one in a rank offset.
// Rank p's block lands in slot p+1 (mod W): a ring schedule's step index used as the slot.
#include "../../../candidates/simple_common.cuh"
SIMPLE_SETUP_TEARDOWN

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  size_t bytes = mgk::nbytes(in[0]);
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));
  for (int r = 0; r < ctx->world_size; ++r)
    MGK_CUDA_TRY(ctx, simple::copy(in[0].host_peers[r], static_cast<char*>(out[0].data) + ((r + 1) % ctx->world_size) * bytes, bytes, s));
  return 0;
}
