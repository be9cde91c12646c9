// Reference: P_r = A_r B_r on cuBLASLt (bf16 out, fp32 accumulation) written into C, then
// NCCL's all-reduce (sum, bf16) in place on C.
#include "mgk/lt_gemm.h"
#include "mgk/reference_kit.h"

namespace {

struct GemmAllReduce : mgk::Reference {
  using Reference::Reference;
  const int64_t M = dim("M"), N = dim("N"), K = dim("K");
  mgk::lt::Handle lt;
  mgk::lt::Gemm gemm;

  int setup() {
    MGK_CUBLAS_TRY(ctx, lt.create());
    MGK_CUBLAS_TRY(ctx, gemm.plan(lt, {M, N, K}));
    return 0;
  }

  int run(const mgk_tensor* in, const mgk_tensor* out, cudaStream_t st) {
    MGK_CUBLAS_TRY(ctx, gemm.run(in[0].data, in[1].data, out[0].data, st));
    MGK_NCCL_STEP(ctx, ncclAllReduce(out[0].data, out[0].data, out[0].numel, ncclBfloat16, ncclSum, comm(), st));
    return 0;
  }

  // C = sum_s A_s B_s exactly, from every rank's regenerated inputs, with the scale of a
  // reduction of bf16-rounded products (oracle_gemm.cuh).
  int oracle(const mgk_oracle_args* a, cudaStream_t st) {
    auto load = [&](int r, double* A, double* B) {
      cudaError_t e = mgk::oracle::regen(a->gens[0], r, K, 0, 0, M, K, A, K, st);
      return e != cudaSuccess ? e : mgk::oracle::regen(a->gens[1], r, N, 0, 0, K, N, B, N, st);
    };
    return mgk::oracle::sum_of_rank_products(ctx, blas, M, N, K, load, static_cast<double*>(a->expected[0]),
                                             a->scale[0], st);
  }
};

}  // namespace

MGK_REFERENCE(GemmAllReduce)
