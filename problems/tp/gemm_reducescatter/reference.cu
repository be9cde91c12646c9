// Reference: P_r = A_r B_r (M x N) on cuBLASLt (bf16 out, fp32 accumulation) into
// workspace, then NCCL's reduce-scatter (sum, bf16): rank r gets row block r of the sum.
#include "mgk/lt_gemm.h"
#include "mgk/reference_kit.h"

namespace {

struct GemmReduceScatter : mgk::Reference {
  using Reference::Reference;
  const int64_t M = dim("M"), ML = dim("ML"), N = dim("N"), KL = dim("KL");
  mgk::lt::Handle lt;
  mgk::lt::Gemm gemm;
  mgk::DeviceBuffer<__nv_bfloat16> partial;  // P_r, M x N

  int setup() {
    MGK_CUDA_TRY(ctx, partial.allocate(M * N));
    MGK_CUBLAS_TRY(ctx, lt.create());
    MGK_CUBLAS_TRY(ctx, gemm.plan(lt, {M, N, KL}));
    return 0;
  }

  int run(const mgk_tensor* in, const mgk_tensor* out, cudaStream_t st) {
    MGK_CUBLAS_TRY(ctx, gemm.run(in[0].data, in[1].data, partial, st));
    MGK_NCCL_STEP(ctx, ncclReduceScatter(partial, out[0].data, out[0].numel, ncclBfloat16, ncclSum, comm(), st));
    return 0;
  }

  // Y = rows [r ML, (r+1) ML) of sum_s A_s B_s exactly, with the scale of a reduction of
  // bf16-rounded products (oracle_gemm.cuh): only those rows of every A_s are needed.
  int oracle(const mgk_oracle_args* a, cudaStream_t st) {
    auto load = [&](int r, double* A, double* B) {
      cudaError_t e = mgk::oracle::regen(a->gens[0], r, KL, rank() * ML, 0, ML, KL, A, KL, st);
      return e != cudaSuccess ? e : mgk::oracle::regen(a->gens[1], r, N, 0, 0, KL, N, B, N, st);
    };
    return mgk::oracle::sum_of_rank_products(ctx, blas, ML, N, KL, load, static_cast<double*>(a->expected[0]),
                                             a->scale[0], st);
  }
};

}  // namespace

MGK_REFERENCE(GemmReduceScatter)
