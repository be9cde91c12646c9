// Mutant of tests/gpu/candidates/tp/allgather_gemm.cu. Class: a wrong transpose.
// B [K, N] read as if stored [N, K] (op T): the nn.Linear weight convention assumed for a K x N operand.
//
// The plain candidate's description:
// Plain: after a barrier, copy every rank's A block (peer pointers) into its columns of a
// private A_global, then C = A_global B on cuBLAS.
#include "../../../candidates/plain_compute.cuh"

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  return plain::setup(ctx, {}, {size_t(mgk::dim(ctx, "M") * mgk::dim(ctx, "K")) * 2});
}
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { plain::teardown(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  const int64_t M = mgk::dim(ctx, "M"), KL = mgk::dim(ctx, "KL"), K = mgk::dim(ctx, "K"), N = mgk::dim(ctx, "N");
  auto* global = static_cast<__nv_bfloat16*>(plain::state(ctx).local[0]);
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every rank's A of this call is in place
  MGK_CUDA_TRY(ctx, plain::gather_columns(ctx, in[0], 0, M, KL, global, s));
  MGK_CUBLAS_TRY(ctx, plain::gemm(ctx, s, false, true, M, N, K, global, K, in[1].data, K, out[0].data, N));
  return 0;
}
