// Mutant of tests/gpu/candidates/tp/allgather_gemm_AT.cu. Class: off by one in a rank offset.
// Rank r's A block lands in column block r + 1 (mod W): a ring step used as the block index.
//
// The plain candidate's description:
// Plain: after a barrier, copy every rank's A block (peer pointers) into its columns of a
// private A_global, then CT = B^T A_global^T on cuBLAS.
#include "../../../candidates/plain_compute.cuh"

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  return plain::setup(ctx, {}, {size_t(mgk::dim(ctx, "M") * mgk::dim(ctx, "K")) * 2});
}
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { plain::teardown(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  const int64_t M = mgk::dim(ctx, "M"), KL = mgk::dim(ctx, "KL"), K = mgk::dim(ctx, "K"), N = mgk::dim(ctx, "N");
  auto* global = static_cast<__nv_bfloat16*>(plain::state(ctx).local[0]);
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every rank's A of this call is in place
  for (int r = 0; r < ctx->world_size; ++r)
    MGK_CUDA_TRY(ctx, plain::copy_matrix(in[0].host_peers[r], KL, global + ((r + 1) % ctx->world_size) * KL, K, M, KL, s));
  // CT (N x M) = op(B) op(A_global) with B stored K x N and A_global stored M x K, both transposed.
  MGK_CUBLAS_TRY(ctx, plain::gemm(ctx, s, true, true, N, M, K, in[1].data, N, global, K, out[0].data, M));
  return 0;
}
