// Reference: P_r = A_r B_r (M x N) on cuBLASLt (bf16 out, fp32 accumulation) into
// workspace, then NCCL's reduce-scatter (sum, bf16): rank r gets row block r of the sum.
#include "mgk/lt_gemm.h"
#include "mgk/oracle_gemm.cuh"
#include "mgk/reference.h"

namespace {

struct State {
  mgk::lt::Handle lt;
  mgk::lt::Gemm gemm;
  void* partial = nullptr;  // P_r, M x N bf16
  mgk::oracle::Blas blas;
  ~State() { cudaFree(partial); }
};

State& state(mgk_ctx* ctx) { return *static_cast<State*>(ctx->state); }

}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  auto* s = new State;
  ctx->state = s;
  const int64_t M = mgk::dim(ctx, "M"), N = mgk::dim(ctx, "N"), KL = mgk::dim(ctx, "KL");
  MGK_CUDA_TRY(ctx, cudaMalloc(&s->partial, size_t(M * N) * 2));
  MGK_CUBLAS_TRY(ctx, s->lt.create());
  MGK_CUBLAS_TRY(ctx, s->gemm.plan(s->lt, {M, N, KL}));
  return 0;
}

MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { delete &state(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t st) {
  State& s = state(ctx);
  MGK_CUBLAS_TRY(ctx, s.gemm.run(in[0].data, in[1].data, s.partial, st));
  MGK_NCCL_STEP(ctx, ncclReduceScatter(s.partial, out[0].data, out[0].numel, ncclBfloat16, ncclSum, mgk::comm(ctx), st));
  return 0;
}

// Y = rows [r ML, (r+1) ML) of sum_s A_s B_s exactly, with the scale of a reduction of
// bf16-rounded products (oracle_gemm.cuh): only those rows of every A_s are needed.
MGK_EXPORT int mgk_oracle(mgk_ctx* ctx, const mgk_oracle_args* a, cudaStream_t st) {
  const int64_t ML = mgk::dim(ctx, "ML"), N = mgk::dim(ctx, "N"), KL = mgk::dim(ctx, "KL");
  auto load = [&](int r, double* A, double* B) {
    cudaError_t e = mgk::oracle::regen(a->gens[0], r, KL, ctx->rank * ML, 0, ML, KL, A, KL, st);
    return e != cudaSuccess ? e : mgk::oracle::regen(a->gens[1], r, N, 0, 0, KL, N, B, N, st);
  };
  return mgk::oracle::sum_of_rank_products(ctx, state(ctx).blas, ML, N, KL, load,
                                           static_cast<double*>(a->expected[0]), a->scale[0], st);
}
