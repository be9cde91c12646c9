// Mutant of tests/gpu/candidates/scatter.cu. Class: off by one in a rank offset (chunks counted from the end).
// Rank r takes chunk W - 1 - r: the chunks numbered from the end, as a reversed ring hands them out.
#include "../../../candidates/simple_common.cuh"
SIMPLE_SETUP_TEARDOWN

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  size_t bytes = mgk::nbytes(out[0]);
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));
  MGK_CUDA_TRY(ctx, simple::copy(static_cast<const char*>(in[0].host_peers[0]) + (ctx->world_size - 1 - ctx->rank) * bytes, out[0].data, bytes, s));
  return 0;
}
