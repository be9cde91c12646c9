// Reference: NCCL all-gathers the A blocks (W x M x KL), a copy lays them side by side as
// A_global (M x K), and cuBLASLt computes C = A_global B (bf16 out, fp32 accumulation).
#include "mgk/lt_gemm.h"
#include "mgk/reference_kit.h"

namespace {

struct AllGatherGemm : mgk::Reference {
  using Reference::Reference;
  const int64_t M = dim("M"), KL = dim("KL"), K = dim("K"), N = dim("N");
  mgk::lt::Handle lt;
  mgk::lt::Gemm gemm;
  mgk::DeviceBuffer<__nv_bfloat16> gathered;  // W x M x KL, the blocks as NCCL delivers them
  mgk::DeviceBuffer<__nv_bfloat16> global;    // M x K

  int setup() {
    MGK_CUDA_TRY(ctx, gathered.allocate(M * K));
    MGK_CUDA_TRY(ctx, global.allocate(M * K));
    MGK_CUBLAS_TRY(ctx, lt.create());
    MGK_CUBLAS_TRY(ctx, gemm.plan(lt, {M, N, K}));
    return 0;
  }

  int run(const mgk_tensor* in, const mgk_tensor* out, cudaStream_t st) {
    MGK_NCCL_STEP(ctx, ncclAllGather(in[0].data, gathered, M * KL, ncclBfloat16, comm(), st));
    MGK_CUDA_TRY(ctx, mgk::blocks_side_by_side(gathered, M * KL * 2, global, M, KL, 2, world(), st));
    MGK_CUBLAS_TRY(ctx, gemm.run(global, in[1].data, out[0].data, st));
    return 0;
  }

  // C = A_global B_r exactly, A_global from every rank's regenerated block, rounded once at
  // the end (oracle_gemm.cuh).
  int oracle(const mgk_oracle_args* a, cudaStream_t st) {
    namespace o = mgk::oracle;
    o::Scratch scratch(st);
    double *A = scratch.get<double>(M * K), *B = scratch.get<double>(K * N);
    if (!scratch.ok()) return mgk::set_error(ctx, "oracle: out of device memory");
    MGK_CUDA_TRY(ctx, o::regen_side_by_side(a->gens[0], world(), KL, 0, M, A, st));
    MGK_CUDA_TRY(ctx, o::regen(a->gens[1], rank(), N, 0, 0, K, N, B, N, st));
    return o::product_rounded_once(ctx, blas, M, N, K, {A, K, M * K}, {B, N, K * N},
                                   static_cast<double*>(a->expected[0]), a->scale[0], st);
  }
};

}  // namespace

MGK_REFERENCE(AllGatherGemm)
