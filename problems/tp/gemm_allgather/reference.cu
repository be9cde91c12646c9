// Reference: cuBLASLt computes A_r B_r (M x NL; bf16 out, fp32 accumulation) straight into
// this rank's slot of the all-gather buffer (W slots of M x NL, each padded to 256 bytes so
// that every slot is as aligned as the GEMM likes), NCCL all-gathers in place, and a strided
// copy lays the W blocks side by side as the columns of C.
#include "mgk/lt_gemm.h"
#include "mgk/reference_kit.h"

namespace {

struct GemmAllGather : mgk::Reference {
  using Reference::Reference;
  const int64_t M = dim("M"), K = dim("K"), NL = dim("NL"), N = dim("N");
  const int64_t slot = (M * NL + 127) / 128 * 128;  // elements per slot of the all-gather buffer
  mgk::lt::Handle lt;
  mgk::lt::Gemm gemm;
  mgk::DeviceBuffer<__nv_bfloat16> gathered;  // W slots of M x NL

  int setup() {
    MGK_CUDA_TRY(ctx, gathered.allocate(world() * slot));
    MGK_CUBLAS_TRY(ctx, lt.create());
    MGK_CUBLAS_TRY(ctx, gemm.plan(lt, {M, NL, K}));
    return 0;
  }

  int run(const mgk_tensor* in, const mgk_tensor* out, cudaStream_t st) {
    __nv_bfloat16* mine = gathered + rank() * slot;
    MGK_CUBLAS_TRY(ctx, gemm.run(in[0].data, in[1].data, mine, st));
    MGK_NCCL_STEP(ctx, ncclAllGather(mine, gathered, slot, ncclBfloat16, comm(), st));
    MGK_CUDA_TRY(ctx, mgk::blocks_side_by_side(gathered, slot * 2, out[0].data, M, NL, 2, world(), st));
    return 0;
  }

  // Column block s of C = A_s B_s exactly, from rank s's regenerated inputs; S = |C| plus the
  // fp32 accumulation of K terms times |A_s| |B_s| (one rounding, at the end).
  int oracle(const mgk_oracle_args* a, cudaStream_t st) {
    namespace o = mgk::oracle;
    o::Scratch scratch(st);
    double *A = scratch.get<double>(M * K), *B = scratch.get<double>(K * NL), *mag = scratch.get<double>(M * N);
    if (!scratch.ok()) return mgk::set_error(ctx, "oracle: out of device memory");
    cublasHandle_t h = oracle_blas(st);
    if (!h) return 1;
    auto* expected = static_cast<double*>(a->expected[0]);
    for (int r = 0; r < world(); ++r) {
      MGK_CUDA_TRY(ctx, o::regen(a->gens[0], r, K, 0, 0, M, K, A, K, st));
      MGK_CUDA_TRY(ctx, o::regen(a->gens[1], r, NL, 0, 0, K, NL, B, NL, st));
      MGK_CUBLAS_TRY(ctx, o::product_and_magnitude(h, M, NL, K, {A, K, M * K}, {B, NL, K * NL}, expected + r * NL, 0,
                                                   mag + r * NL, 0, N, st));
    }
    MGK_CUDA_TRY(ctx, o::combine_scale(expected, o::fp32_accumulation(K), mag, a->scale[0], M * N, st));
    return 0;
  }
};

}  // namespace

MGK_REFERENCE(GemmAllGather)
