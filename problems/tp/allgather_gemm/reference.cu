// Reference: NCCL all-gathers the A blocks (W x M x KL), a copy lays them side by side as
// A_global (M x K), and cuBLASLt computes C = A_global B (bf16 out, fp32 accumulation).
#include "mgk/lt_gemm.h"
#include "mgk/oracle_gemm.cuh"
#include "mgk/reference.h"

namespace {

struct State {
  mgk::lt::Handle lt;
  mgk::lt::Gemm gemm;
  void* gathered = nullptr;  // W x M x KL, the blocks as NCCL delivers them
  void* global = nullptr;    // M x K
  mgk::oracle::Blas blas;
  ~State() {
    cudaFree(gathered);
    cudaFree(global);
  }
};

State& state(mgk_ctx* ctx) { return *static_cast<State*>(ctx->state); }

}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  auto* s = new State;
  ctx->state = s;
  const int64_t M = mgk::dim(ctx, "M"), K = mgk::dim(ctx, "K"), N = mgk::dim(ctx, "N");
  MGK_CUDA_TRY(ctx, cudaMalloc(&s->gathered, size_t(M * K) * 2));
  MGK_CUDA_TRY(ctx, cudaMalloc(&s->global, size_t(M * K) * 2));
  MGK_CUBLAS_TRY(ctx, s->lt.create());
  MGK_CUBLAS_TRY(ctx, s->gemm.plan(s->lt, {M, N, K}));
  return 0;
}

MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { delete &state(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t st) {
  State& s = state(ctx);
  const int64_t M = mgk::dim(ctx, "M"), KL = mgk::dim(ctx, "KL");
  MGK_NCCL_STEP(ctx, ncclAllGather(in[0].data, s.gathered, M * KL, ncclBfloat16, mgk::comm(ctx), st));
  MGK_CUDA_TRY(ctx, mgk::blocks_side_by_side(s.gathered, M * KL * 2, s.global, M, KL, 2, ctx->world_size, st));
  MGK_CUBLAS_TRY(ctx, s.gemm.run(s.global, in[1].data, out[0].data, st));
  return 0;
}

// C = A_global B_r exactly, A_global from every rank's regenerated block, rounded once at
// the end (oracle_gemm.cuh).
MGK_EXPORT int mgk_oracle(mgk_ctx* ctx, const mgk_oracle_args* a, cudaStream_t st) {
  namespace o = mgk::oracle;
  const int64_t M = mgk::dim(ctx, "M"), KL = mgk::dim(ctx, "KL"), K = mgk::dim(ctx, "K"), N = mgk::dim(ctx, "N");
  o::Scratch scratch(st);
  double *A = scratch.get<double>(M * K), *B = scratch.get<double>(K * N);
  if (!scratch.ok()) return mgk::set_error(ctx, "oracle: out of device memory");
  MGK_CUDA_TRY(ctx, o::regen_side_by_side(a->gens[0], ctx->world_size, KL, 0, M, A, st));
  MGK_CUDA_TRY(ctx, o::regen(a->gens[1], ctx->rank, N, 0, 0, K, N, B, N, st));
  return o::product_rounded_once(ctx, state(ctx).blas, M, N, K, {A, K, M * K}, {B, N, K * N},
                                 static_cast<double*>(a->expected[0]), a->scale[0], st);
}
