// Reference: cuBLASLt computes A_r B_r (M x NL; bf16 out, fp32 accumulation) straight into
// this rank's slot of the all-gather buffer (W slots of M x NL, each padded to 256 bytes so
// that every slot is as aligned as the GEMM likes), NCCL all-gathers in place, and a strided
// copy lays the W blocks side by side as the columns of C.
#include "mgk/lt_gemm.h"
#include "mgk/oracle_gemm.cuh"
#include "mgk/reference.h"

namespace {

struct State {
  mgk::lt::Handle lt;
  mgk::lt::Gemm gemm;
  void* gathered = nullptr;  // W x M x NL
  mgk::oracle::Blas blas;
  ~State() { cudaFree(gathered); }
};

State& state(mgk_ctx* ctx) { return *static_cast<State*>(ctx->state); }

// Elements per slot of the all-gather buffer.
int64_t slot_elems(mgk_ctx* ctx) { return (mgk::dim(ctx, "M") * mgk::dim(ctx, "NL") + 127) / 128 * 128; }

}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  auto* s = new State;
  ctx->state = s;
  const int64_t M = mgk::dim(ctx, "M"), K = mgk::dim(ctx, "K"), NL = mgk::dim(ctx, "NL");
  MGK_CUDA_TRY(ctx, cudaMalloc(&s->gathered, size_t(ctx->world_size * slot_elems(ctx)) * 2));
  MGK_CUBLAS_TRY(ctx, s->lt.create());
  MGK_CUBLAS_TRY(ctx, s->gemm.plan(s->lt, {M, NL, K}));
  return 0;
}

MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { delete &state(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t st) {
  State& s = state(ctx);
  const int64_t M = mgk::dim(ctx, "M"), NL = mgk::dim(ctx, "NL"), slot = slot_elems(ctx);
  const int64_t block = slot * 2;
  char* gathered = static_cast<char*>(s.gathered);
  MGK_CUBLAS_TRY(ctx, s.gemm.run(in[0].data, in[1].data, gathered + ctx->rank * block, st));
  MGK_NCCL_STEP(ctx, ncclAllGather(gathered + ctx->rank * block, gathered, slot, ncclBfloat16, mgk::comm(ctx), st));
  MGK_CUDA_TRY(ctx, mgk::blocks_side_by_side(gathered, block, out[0].data, M, NL, 2, ctx->world_size, st));
  return 0;
}

// Column block s of C = A_s B_s exactly, from rank s's regenerated inputs; S = |C| plus the
// fp32 accumulation of K terms times |A_s| |B_s| (one rounding, at the end).
MGK_EXPORT int mgk_oracle(mgk_ctx* ctx, const mgk_oracle_args* a, cudaStream_t st) {
  namespace o = mgk::oracle;
  const int64_t M = mgk::dim(ctx, "M"), K = mgk::dim(ctx, "K"), NL = mgk::dim(ctx, "NL"), N = mgk::dim(ctx, "N");
  o::Scratch scratch(st);
  double *A = scratch.get<double>(M * K), *B = scratch.get<double>(K * NL), *mag = scratch.get<double>(M * N);
  if (!scratch.ok()) return mgk::set_error(ctx, "oracle: out of device memory");
  cublasHandle_t h = o::blas_on(ctx, state(ctx).blas, st);
  if (!h) return 1;
  auto* expected = static_cast<double*>(a->expected[0]);
  for (int r = 0; r < ctx->world_size; ++r) {
    MGK_CUDA_TRY(ctx, o::regen(a->gens[0], r, K, 0, 0, M, K, A, K, st));
    MGK_CUDA_TRY(ctx, o::regen(a->gens[1], r, NL, 0, 0, K, NL, B, NL, st));
    MGK_CUBLAS_TRY(ctx, o::product_and_magnitude(h, M, NL, K, {A, K, M * K}, {B, NL, K * NL}, expected + r * NL, 0,
                                                 mag + r * NL, 0, N, st));
  }
  MGK_CUDA_TRY(ctx, o::combine_scale(expected, o::fp32_accumulation(K), mag, a->scale[0], M * N, st));
  return 0;
}
