// Mutant of tests/gpu/candidates/broadcast.cu. Class: the communication skipped where inputs happen to agree.
// The root does nothing, as in NCCL's in-place broadcast where its buffer already holds the data; here y is a separate buffer.
#include "../../../candidates/simple_common.cuh"
SIMPLE_SETUP_TEARDOWN

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));
  if (ctx->rank != 0) MGK_CUDA_TRY(ctx, simple::copy(in[0].host_peers[0], out[0].data, mgk::nbytes(out[0]), s));
  return 0;
}
