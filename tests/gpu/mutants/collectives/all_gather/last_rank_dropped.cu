// Mutant of tests/gpu/candidates/all_gather.cu. Class: off by one in a counter.
// The loop stops at W - 1 (a `for r in range(1, W)` ring of W - 1 steps, translated as a slot loop).
#include "../../../candidates/simple_common.cuh"
SIMPLE_SETUP_TEARDOWN

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  size_t bytes = mgk::nbytes(in[0]);
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));
  for (int r = 0; r < ctx->world_size - 1; ++r)
    MGK_CUDA_TRY(ctx, simple::copy(in[0].host_peers[r], static_cast<char*>(out[0].data) + r * bytes, bytes, s));
  return 0;
}
