// Mutant of tests/gpu/candidates/gather.cu. Class: off by one in a counter.
// The root's loop stops at W - 1 (a ring's step count): the last rank's block is never pulled.
#include "../../../candidates/simple_common.cuh"
SIMPLE_SETUP_TEARDOWN

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  size_t bytes = mgk::nbytes(in[0]);
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));
  if (ctx->rank == 0)
    for (int r = 0; r < ctx->world_size - 1; ++r)
      MGK_CUDA_TRY(ctx, simple::copy(in[0].host_peers[r], static_cast<char*>(out[0].data) + r * bytes, bytes, s));
  return 0;
}
