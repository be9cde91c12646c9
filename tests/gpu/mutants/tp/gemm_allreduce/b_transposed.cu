// Mutant of tests/gpu/candidates/tp/gemm_allreduce.cu. Class: a wrong transpose.
// B [K, N] read as if stored [N, K] (op T): the nn.Linear weight convention (out x in) assumed for a K x N operand.
//
// The plain candidate's description:
// Plain: P_r = A_r B_r (cuBLAS, bf16 out) into symmetric workspace; every rank then sums
// every rank's P in fp32, in rank order, into its C.
#include "../../../candidates/plain_compute.cuh"

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  return plain::setup(ctx, {size_t(mgk::dim(ctx, "M") * mgk::dim(ctx, "N")) * 2});
}
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { plain::teardown(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  const int64_t M = mgk::dim(ctx, "M"), N = mgk::dim(ctx, "N"), K = mgk::dim(ctx, "K");
  const mgk_sym_buffer& P = plain::state(ctx).sym[0];
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // no peer still reads this rank's P of the last call
  MGK_CUBLAS_TRY(ctx, plain::gemm(ctx, s, false, true, M, N, K, in[0].data, K, in[1].data, K, P.local, N));
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every P is written
  MGK_CUDA_TRY(ctx, plain::sum_over_ranks(ctx, P.peers, 0, out[0].data, M * N, s));
  return 0;
}
