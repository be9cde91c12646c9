// Mutant of tests/gpu/candidates/sp/ulysses_all_to_all_tensor_primitive.cu. Class: a wrong transpose (the source's row block).
// Row block src of rank src is taken instead of row block r: the chunk index follows the loop variable.
//
// The plain candidate's description:
// Plain: after a barrier, every rank copies row block r (its own index) of each rank s's x
// (peer pointers) into column block s of y. Under MGK_LOCAL_ONLY only its own block (the
// others zeros).
#include "../../../candidates/plain_compute.cuh"

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) { return plain::setup(ctx, {}); }
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { plain::teardown(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  const int w = ctx->world_size;
  const int64_t ML = out[0].shape[0], N = in[0].shape[1];
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every rank's x of this call is in place
  auto* y = static_cast<__nv_bfloat16*>(out[0].data);
  for (int src = 0; src < w; ++src) {
    const auto* x = static_cast<const __nv_bfloat16*>(in[0].host_peers[src]) + src * ML * N;
    MGK_CUDA_TRY(ctx, plain::copy_from(ctx, src, x, N, y + src * N, w * N, ML, N, s));
  }
  return 0;
}
