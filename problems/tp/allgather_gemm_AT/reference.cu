// Reference, as ParallelKernelBench's: each rank transposes its A block (M x KL -> KL x M),
// NCCL all-gathers the transposed blocks, which stack into A_global^T (K x M), and cuBLASLt
// computes CT = B^T A_global^T (N x M; bf16 out, fp32 accumulation).
#include "mgk/lt_gemm.h"
#include "mgk/reference_kit.h"

namespace {

constexpr int kTile = 32;

// dst (cols x rows) = src (rows x cols)^T, row-major bf16; 32 x 32 tiles through shared
// memory so that both the loads and the stores are coalesced.
__global__ void transpose_kernel(const __nv_bfloat16* src, __nv_bfloat16* dst, int64_t rows, int64_t cols) {
  __shared__ __nv_bfloat16 tile[kTile][kTile + 1];
  const int64_t r0 = int64_t(blockIdx.y) * kTile, c0 = int64_t(blockIdx.x) * kTile;
  for (int i = threadIdx.y; i < kTile; i += blockDim.y) {
    const int64_t r = r0 + i, c = c0 + threadIdx.x;
    if (r < rows && c < cols) tile[i][threadIdx.x] = src[r * cols + c];
  }
  __syncthreads();
  for (int i = threadIdx.y; i < kTile; i += blockDim.y) {
    const int64_t c = c0 + i, r = r0 + threadIdx.x;
    if (r < rows && c < cols) dst[c * rows + r] = tile[threadIdx.x][i];
  }
}

struct AllGatherGemmAT : mgk::Reference {
  using Reference::Reference;
  const int64_t M = dim("M"), KL = dim("KL"), K = dim("K"), N = dim("N");
  mgk::lt::Handle lt;
  mgk::lt::Gemm gemm;
  mgk::DeviceBuffer<__nv_bfloat16> block_t;   // KL x M: this rank's A block, transposed
  mgk::DeviceBuffer<__nv_bfloat16> global_t;  // K x M: A_global^T

  int setup() {
    MGK_CUDA_TRY(ctx, block_t.allocate(KL * M));
    MGK_CUDA_TRY(ctx, global_t.allocate(K * M));
    MGK_CUBLAS_TRY(ctx, lt.create());
    mgk::lt::GemmShape g;  // CT (N x M) = B^T (B stored K x N) A_global^T (stored K x M)
    g.m = N, g.n = M, g.k = K, g.trans_a = true;
    MGK_CUBLAS_TRY(ctx, gemm.plan(lt, g));
    return 0;
  }

  int run(const mgk_tensor* in, const mgk_tensor* out, cudaStream_t st) {
    const dim3 grid(unsigned((KL + kTile - 1) / kTile), unsigned((M + kTile - 1) / kTile));
    transpose_kernel<<<grid, dim3(kTile, 8), 0, st>>>(static_cast<const __nv_bfloat16*>(in[0].data), block_t, M, KL);
    MGK_LAUNCH_CHECK(ctx);
    MGK_NCCL_STEP(ctx, ncclAllGather(block_t, global_t, KL * M, ncclBfloat16, comm(), st));
    MGK_CUBLAS_TRY(ctx, gemm.run(in[1].data, global_t, out[0].data, st));
    return 0;
  }

  // CT = (A_global B_r)^T = B_r^T A_global^T exactly, A_global from every rank's regenerated
  // block, rounded once at the end (oracle_gemm.cuh).
  int oracle(const mgk_oracle_args* a, cudaStream_t st) {
    namespace o = mgk::oracle;
    o::Scratch scratch(st);
    double *A = scratch.get<double>(M * K), *B = scratch.get<double>(K * N);
    if (!scratch.ok()) return mgk::set_error(ctx, "oracle: out of device memory");
    MGK_CUDA_TRY(ctx, o::regen_side_by_side(a->gens[0], world(), KL, 0, M, A, st));
    MGK_CUDA_TRY(ctx, o::regen(a->gens[1], rank(), N, 0, 0, K, N, B, N, st));
    // op(B) = B^T (B stored K x N), op(A_global) = A_global^T (stored M x K).
    return o::product_rounded_once(ctx, blas, N, M, K, {B, N, K * N, true}, {A, K, M * K, true},
                                   static_cast<double*>(a->expected[0]), a->scale[0], st);
  }
};

}  // namespace

MGK_REFERENCE(AllGatherGemmAT)
