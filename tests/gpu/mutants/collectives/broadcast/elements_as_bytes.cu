// Mutant of tests/gpu/candidates/broadcast.cu. Class: off by one in an index (element count used as a byte count).
// numel bytes are copied instead of numel * element size: the tail of y is never written.
#include "../../../candidates/simple_common.cuh"
SIMPLE_SETUP_TEARDOWN

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));
  MGK_CUDA_TRY(ctx, simple::copy(in[0].host_peers[0], out[0].data, out[0].numel, s));
  return 0;
}
