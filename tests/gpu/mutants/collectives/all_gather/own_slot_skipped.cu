// Mutant of tests/gpu/candidates/all_gather.cu. Class: a missing term (this rank's own share).
// Only the peers are pulled, as if the output already held this rank's block (the in-place all-gather of NCCL/PyTorch).
#include "../../../candidates/simple_common.cuh"
SIMPLE_SETUP_TEARDOWN

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  size_t bytes = mgk::nbytes(in[0]);
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));
  for (int r = 0; r < ctx->world_size; ++r)
    if (r != ctx->rank)
      MGK_CUDA_TRY(ctx, simple::copy(in[0].host_peers[r], static_cast<char*>(out[0].data) + r * bytes, bytes, s));
  return 0;
}
