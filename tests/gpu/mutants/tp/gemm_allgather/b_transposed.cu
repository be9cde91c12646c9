// Mutant of tests/gpu/candidates/tp/gemm_allgather.cu. Class: a wrong transpose.
// B_r [K, NL] read as if stored [NL, K] (op T): the nn.Linear weight convention assumed for a K x N operand.
//
// The plain candidate's description:
// Plain: after a barrier, C[:, r block] = A_r B_r on cuBLAS straight into this rank's C;
// after a second barrier every rank copies the other blocks from the peers' C.
#include "../../../candidates/plain_compute.cuh"

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) { return plain::setup(ctx, {}); }
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { plain::teardown(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  const int64_t M = mgk::dim(ctx, "M"), K = mgk::dim(ctx, "K"), NL = mgk::dim(ctx, "NL"), N = mgk::dim(ctx, "N");
  auto* c = static_cast<__nv_bfloat16*>(out[0].data);
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // no peer still reads this rank's block of the last call
  MGK_CUBLAS_TRY(ctx, plain::gemm(ctx, s, false, true, M, NL, K, in[0].data, K, in[1].data, K, c + ctx->rank * NL, N));
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every block is written
  for (int r = 0; r < ctx->world_size; ++r)
    if (r != ctx->rank)
      MGK_CUDA_TRY(ctx, plain::copy_from(ctx, r, static_cast<const __nv_bfloat16*>(out[0].host_peers[r]) + r * NL, N,
                                         c + r * NL, N, M, NL, s));
  return 0;
}
