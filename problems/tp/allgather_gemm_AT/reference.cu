// Reference, as ParallelKernelBench's: each rank transposes its A block (M x KL -> KL x M),
// NCCL all-gathers the transposed blocks, which stack into A_global^T (K x M), and cuBLASLt
// computes CT = B^T A_global^T (N x M; bf16 out, fp32 accumulation).
#include "mgk/lt_gemm.h"
#include "mgk/oracle_gemm.cuh"
#include "mgk/reference.h"

namespace {

struct State {
  mgk::lt::Handle lt;
  mgk::lt::Gemm gemm;
  void* block_t = nullptr;   // KL x M: this rank's A block, transposed
  void* global_t = nullptr;  // K x M: A_global^T
  mgk::oracle::Blas blas;
  ~State() {
    cudaFree(block_t);
    cudaFree(global_t);
  }
};

State& state(mgk_ctx* ctx) { return *static_cast<State*>(ctx->state); }

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

}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  auto* s = new State;
  ctx->state = s;
  const int64_t M = mgk::dim(ctx, "M"), KL = mgk::dim(ctx, "KL"), K = mgk::dim(ctx, "K"), N = mgk::dim(ctx, "N");
  MGK_CUDA_TRY(ctx, cudaMalloc(&s->block_t, size_t(KL * M) * 2));
  MGK_CUDA_TRY(ctx, cudaMalloc(&s->global_t, size_t(K * M) * 2));
  MGK_CUBLAS_TRY(ctx, s->lt.create());
  mgk::lt::GemmShape g;  // CT (N x M) = B^T (B stored K x N) A_global^T (stored K x M)
  g.m = N, g.n = M, g.k = K, g.trans_a = true;
  MGK_CUBLAS_TRY(ctx, s->gemm.plan(s->lt, g));
  return 0;
}

MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { delete &state(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t st) {
  State& s = state(ctx);
  const int64_t M = mgk::dim(ctx, "M"), KL = mgk::dim(ctx, "KL");
  const dim3 grid(unsigned((KL + kTile - 1) / kTile), unsigned((M + kTile - 1) / kTile));
  transpose_kernel<<<grid, dim3(kTile, 8), 0, st>>>(static_cast<const __nv_bfloat16*>(in[0].data),
                                                    static_cast<__nv_bfloat16*>(s.block_t), M, KL);
  MGK_LAUNCH_CHECK(ctx);
  MGK_NCCL_STEP(ctx, ncclAllGather(s.block_t, s.global_t, KL * M, ncclBfloat16, mgk::comm(ctx), st));
  MGK_CUBLAS_TRY(ctx, s.gemm.run(in[1].data, s.global_t, out[0].data, st));
  return 0;
}

// CT = (A_global B_r)^T = B_r^T A_global^T exactly, A_global from every rank's regenerated
// block, rounded once at the end (oracle_gemm.cuh).
MGK_EXPORT int mgk_oracle(mgk_ctx* ctx, const mgk_oracle_args* a, cudaStream_t st) {
  namespace o = mgk::oracle;
  const int64_t M = mgk::dim(ctx, "M"), KL = mgk::dim(ctx, "KL"), K = mgk::dim(ctx, "K"), N = mgk::dim(ctx, "N");
  o::Scratch scratch(st);
  double *A = scratch.get<double>(M * K), *B = scratch.get<double>(K * N);
  if (!scratch.ok()) return mgk::set_error(ctx, "oracle: out of device memory");
  MGK_CUDA_TRY(ctx, o::regen_side_by_side(a->gens[0], ctx->world_size, KL, 0, M, A, st));
  MGK_CUDA_TRY(ctx, o::regen(a->gens[1], ctx->rank, N, 0, 0, K, N, B, N, st));
  // op(B) = B^T (B stored K x N), op(A_global) = A_global^T (stored M x K).
  return o::product_rounded_once(ctx, state(ctx).blas, N, M, K, {B, N, K * N, true}, {A, K, M * K, true},
                                 static_cast<double*>(a->expected[0]), a->scale[0], st);
}
