// Mutant of tests/gpu/candidates/broadcast.cu. Class: off by one in a rank offset.
// The root is taken as W - 1 (rank counting from 1, or the ring's last hop) instead of rank 0.
#include "../../../candidates/simple_common.cuh"
SIMPLE_SETUP_TEARDOWN

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));
  MGK_CUDA_TRY(ctx, simple::copy(in[0].host_peers[ctx->world_size - 1], out[0].data, mgk::nbytes(out[0]), s));
  return 0;
}
