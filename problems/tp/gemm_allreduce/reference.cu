// Reference: P_r = A_r B_r on cuBLASLt (bf16 out, fp32 accumulation) written into C, then
// NCCL's all-reduce (sum, bf16) in place on C.
#include "mgk/lt_gemm.h"
#include "mgk/oracle_gemm.cuh"
#include "mgk/reference.h"

namespace {

struct State {
  mgk::lt::Handle lt;
  mgk::lt::Gemm gemm;
  mgk::oracle::Blas blas;
};

State& state(mgk_ctx* ctx) { return *static_cast<State*>(ctx->state); }

}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  auto* s = new State;
  ctx->state = s;
  MGK_CUBLAS_TRY(ctx, s->lt.create());
  MGK_CUBLAS_TRY(ctx, s->gemm.plan(s->lt, {mgk::dim(ctx, "M"), mgk::dim(ctx, "N"), mgk::dim(ctx, "K")}));
  return 0;
}

MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { delete &state(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t st) {
  MGK_CUBLAS_TRY(ctx, state(ctx).gemm.run(in[0].data, in[1].data, out[0].data, st));
  MGK_NCCL_STEP(ctx, ncclAllReduce(out[0].data, out[0].data, out[0].numel, ncclBfloat16, ncclSum, mgk::comm(ctx), st));
  return 0;
}

// C = sum_s A_s B_s exactly, from every rank's regenerated inputs, with the scale of a
// reduction of bf16-rounded products (oracle_gemm.cuh).
MGK_EXPORT int mgk_oracle(mgk_ctx* ctx, const mgk_oracle_args* a, cudaStream_t st) {
  const int64_t M = mgk::dim(ctx, "M"), N = mgk::dim(ctx, "N"), K = mgk::dim(ctx, "K");
  auto load = [&](int r, double* A, double* B) {
    cudaError_t e = mgk::oracle::regen(a->gens[0], r, K, 0, 0, M, K, A, K, st);
    return e != cudaSuccess ? e : mgk::oracle::regen(a->gens[1], r, N, 0, 0, K, N, B, N, st);
  };
  return mgk::oracle::sum_of_rank_products(ctx, state(ctx).blas, M, N, K, load, static_cast<double*>(a->expected[0]),
                                           a->scale[0], st);
}
