// Mutant of tests/gpu/candidates/scatter.cu. Class: off by one in an index (element offset used as a byte offset).
// The chunk's offset is rank * numel bytes, not rank * numel * element size.
#include "../../../candidates/simple_common.cuh"
SIMPLE_SETUP_TEARDOWN

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  size_t bytes = mgk::nbytes(out[0]);
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));
  MGK_CUDA_TRY(ctx, simple::copy(static_cast<const char*>(in[0].host_peers[0]) + ctx->rank * size_t(out[0].numel), out[0].data, bytes, s));
  return 0;
}
