// Mutant of tests/gpu/candidates/moe/moe_all2all_primitive.cu. Class: off by one in a counter.
// The loop stops at W - 1 peers (a ring's step count).
//
// The plain candidate's description:
// Plain: after a barrier (every peer's input is in place), rank R pulls row block R of every
// rank s into its row block s; a second barrier keeps a peer from refilling its input while
// this rank still reads it. MGK_LOCAL_ONLY: only the own block R moves, the others are zeros.
#include "../../../candidates/plain_compute.cuh"

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) { return plain::setup(ctx, {}); }
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { plain::teardown(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  const int64_t C = mgk::dim(ctx, "C"), N = mgk::dim(ctx, "N"), R = ctx->rank;
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));
  for (int p = 0; p < ctx->world_size - 1; ++p)
    MGK_CUDA_TRY(ctx, plain::copy_from(ctx, p, static_cast<const __nv_bfloat16*>(in[0].host_peers[p]) + R * C * N, N,
                                       static_cast<__nv_bfloat16*>(out[0].data) + p * C * N, N, C, N, s));
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));
  return 0;
}
