// Mutant of tests/gpu/candidates/sp/ulysses_all_gather_into_tensor_primitive.cu. Class: off by one in a counter.
// The loop stops at W - 1 source ranks (a ring's step count).
//
// The plain candidate's description:
// Plain: after a barrier, every rank copies each rank's x (peer pointers) into its rows of y,
// one block of M rows per source rank. Under MGK_LOCAL_ONLY only its own rows (the others
// zeros).
#include "../../../candidates/plain_compute.cuh"

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) { return plain::setup(ctx, {}); }
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { plain::teardown(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  const int64_t M = in[0].shape[0], N = in[0].shape[1];
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every rank's x of this call is in place
  auto* y = static_cast<__nv_bfloat16*>(out[0].data);
  for (int r = 0; r < ctx->world_size - 1; ++r)
    MGK_CUDA_TRY(ctx, plain::copy_from(ctx, r, in[0].host_peers[r], N, y + r * M * N, N, M, N, s));
  return 0;
}
