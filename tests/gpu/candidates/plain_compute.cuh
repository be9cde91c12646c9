// Shared by the plain candidates of the compute problems (tests/gpu/candidates/<category>/):
// the epoch barrier of simple_common.cuh, a cuBLAS handle for the local GEMMs (bf16 in, fp32
// accumulation) and symmetric workspace. Obviously correct rather than fast: GEMMs on
// cuBLAS, communication by plain loads from peer pointers, a barrier around every exchange.
//
// -D MGK_LOCAL_ONLY=1 builds each of them without its communication: a rank computes from
// its own data only, as if the peers' contributions were absent (zeros). That degenerate
// must fail everywhere (tests/gpu/suite_gpu_test.cc).
#pragma once
#include <cublas_v2.h>

#include <algorithm>
#include <vector>

#include "mgk/cublas_check.h"
#include "simple_common.cuh"

#ifndef MGK_LOCAL_ONLY
#define MGK_LOCAL_ONLY 0
#endif

namespace plain {

struct State : simple::State {
  cublasHandle_t blas = nullptr;
  std::vector<mgk_sym_buffer> sym;  // symmetric workspace, in the order asked for
  std::vector<void*> local;         // private workspace (cudaMalloc), in the order asked for
};

inline State& state(mgk_ctx* ctx) { return *static_cast<State*>(static_cast<simple::State*>(ctx->state)); }

// The barrier flags, a cuBLAS handle, one symmetric buffer per entry of `sym_bytes` and one
// private buffer per entry of `local_bytes`.
inline int setup(mgk_ctx* ctx, std::vector<size_t> sym_bytes, std::vector<size_t> local_bytes = {}) {
  auto* s = new State;
  ctx->state = static_cast<simple::State*>(s);
  if (ctx->sym_alloc(ctx, sizeof(unsigned long long) * ctx->world_size, &s->flags)) return 1;
  for (size_t bytes : sym_bytes) {
    s->sym.emplace_back();
    if (ctx->sym_alloc(ctx, bytes, &s->sym.back())) return 1;
  }
  for (size_t bytes : local_bytes) {
    s->local.push_back(nullptr);
    MGK_CUDA_TRY(ctx, cudaMalloc(&s->local.back(), std::max<size_t>(bytes, 16)));
  }
  if (cublasCreate(&s->blas) != CUBLAS_STATUS_SUCCESS) return mgk::set_error(ctx, "cublasCreate failed");
  // cuBLAS may otherwise split K and add the partials in bf16 (the output type) at shapes
  // like `odd`: errors of the size of the partials, outside the suite's tolerance.
  if (cublasSetMathMode(s->blas, cublasMath_t(CUBLAS_DEFAULT_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)) !=
      CUBLAS_STATUS_SUCCESS)
    return mgk::set_error(ctx, "cublasSetMathMode failed");
  return 0;
}

inline void teardown(mgk_ctx* ctx) {
  State& s = state(ctx);
  if (s.blas) cublasDestroy(s.blas);
  for (void* p : s.local) cudaFree(p);
  delete &s;
}

// The ranks whose data a rank combines: all of them, or only its own without communication.
inline int first_source(mgk_ctx* ctx) { return MGK_LOCAL_ONLY ? ctx->rank : 0; }
inline int end_source(mgk_ctx* ctx) { return MGK_LOCAL_ONLY ? ctx->rank + 1 : ctx->world_size; }
inline bool uses(mgk_ctx* ctx, int source) { return source >= first_source(ctx) && source < end_source(ctx); }

// Row-major D[m x n] = op(A) op(B) on cuBLAS: A, B bf16, fp32 accumulation, D of `d_type`
// (bf16 or fp32). op(A) is m x k (A stored k x m when ta), op(B) k x n (B stored n x k when
// tb); ld* are row strides in elements.
inline cublasStatus_t gemm(mgk_ctx* ctx, cudaStream_t st, bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                           const void* a, int64_t lda, const void* b, int64_t ldb, void* d, int64_t ldd,
                           cudaDataType_t d_type = CUDA_R_16BF) {
  cublasHandle_t h = state(ctx).blas;
  cublasSetStream(h, st);
  const float one = 1, zero = 0;
  // Row-major D = op(A) op(B) is column-major D^T = op(B)^T op(A)^T.
  return cublasGemmEx(h, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, int(n), int(m), int(k), &one,
                      b, CUDA_R_16BF, int(ldb), a, CUDA_R_16BF, int(lda), &zero, d, d_type, int(ldd),
                      CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
}

inline int blocks_for(int64_t n) { return int(std::min<int64_t>((n + 255) / 256, 132 * 8)); }

// dst[r * dst_ld + c] = src[r * src_ld + c] for r < rows, c < cols (bf16 elements, any pointers).
__global__ void copy_matrix_kernel(const __nv_bfloat16* src, int64_t src_ld, __nv_bfloat16* dst, int64_t dst_ld,
                                   int64_t rows, int64_t cols) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < rows * cols; i += int64_t(gridDim.x) * blockDim.x)
    dst[(i / cols) * dst_ld + i % cols] = src[(i / cols) * src_ld + i % cols];
}
inline cudaError_t copy_matrix(const void* src, int64_t src_ld, void* dst, int64_t dst_ld, int64_t rows, int64_t cols,
                               cudaStream_t s) {
  if (rows * cols == 0) return cudaSuccess;
  copy_matrix_kernel<<<blocks_for(rows * cols), 256, 0, s>>>(static_cast<const __nv_bfloat16*>(src), src_ld,
                                                            static_cast<__nv_bfloat16*>(dst), dst_ld, rows, cols);
  return cudaGetLastError();
}
// The same for a matrix of zeros.
__global__ void zero_matrix_kernel(__nv_bfloat16* dst, int64_t dst_ld, int64_t rows, int64_t cols) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < rows * cols; i += int64_t(gridDim.x) * blockDim.x)
    dst[(i / cols) * dst_ld + i % cols] = __float2bfloat16(0.0f);
}
inline cudaError_t zero_matrix(void* dst, int64_t dst_ld, int64_t rows, int64_t cols, cudaStream_t s) {
  if (rows * cols == 0) return cudaSuccess;
  zero_matrix_kernel<<<blocks_for(rows * cols), 256, 0, s>>>(static_cast<__nv_bfloat16*>(dst), dst_ld, rows, cols);
  return cudaGetLastError();
}

// A block of `rows` x `cols` copied from rank `source`'s matrix, or zeros when this rank does
// not use that source (MGK_LOCAL_ONLY).
inline cudaError_t copy_from(mgk_ctx* ctx, int source, const void* src, int64_t src_ld, void* dst, int64_t dst_ld,
                             int64_t rows, int64_t cols, cudaStream_t s) {
  return uses(ctx, source) ? copy_matrix(src, src_ld, dst, dst_ld, rows, cols, s)
                           : zero_matrix(dst, dst_ld, rows, cols, s);
}

// Rows [row0, row0 + rows) of every rank's x (a symmetric input, rows of `cols` bf16), side by
// side in dst (rows x W * cols): rank r's at columns [r * cols, (r + 1) * cols); zeros for
// the ranks not used.
inline cudaError_t gather_columns(mgk_ctx* ctx, const mgk_tensor& x, int64_t row0, int64_t rows, int64_t cols,
                                  void* dst, cudaStream_t s) {
  const int64_t ld = ctx->world_size * cols;
  for (int r = 0; r < ctx->world_size; ++r) {
    cudaError_t e = copy_from(ctx, r, static_cast<const __nv_bfloat16*>(x.host_peers[r]) + row0 * cols, cols,
                              static_cast<__nv_bfloat16*>(dst) + r * cols, ld, rows, cols, s);
    if (e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

// y[i] = sum over the used ranks r of x_r[offset + i] (bf16, fp32 accumulation, rank order).
inline cudaError_t sum_over_ranks(mgk_ctx* ctx, void* const* x_peers, int64_t offset, void* y, int64_t n,
                                  cudaStream_t s) {
  return simple::sum(MGK_BF16, x_peers + first_source(ctx), end_source(ctx) - first_source(ctx), offset, y, n, s);
}

}  // namespace plain
