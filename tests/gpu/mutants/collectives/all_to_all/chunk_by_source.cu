// Mutant of tests/gpu/candidates/all_to_all.cu. Class: off by one in an index (the source's chunk, not the destination's).
// Chunk p of peer p is pulled instead of chunk r of peer p: the chunk index follows the loop variable.
#include "../../../candidates/simple_common.cuh"
SIMPLE_SETUP_TEARDOWN

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  size_t chunk = mgk::nbytes(out[0]) / ctx->world_size;
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));
  for (int p = 0; p < ctx->world_size; ++p)
    MGK_CUDA_TRY(ctx, simple::copy(static_cast<const char*>(in[0].host_peers[p]) + p * chunk,
                                   static_cast<char*>(out[0].data) + p * chunk, chunk, s));
  return 0;
}
