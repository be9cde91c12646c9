// A GEMM on cuBLASLt, planned once (in mgk_setup) and run many times (in mgk_run): how
// references do their matrix products at library speed. Row-major throughout:
//   D[m x n] = op(A) . op(B)
// with A and B bf16, fp32 accumulation, D bf16 or fp32. The plan holds the heuristic's
// best algorithm for the shape, the layouts and the pointers' alignment, and its own
// workspace, allocated when planned. Host code only (C++17); link -lcublasLt -lcublas.
#pragma once
#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstdint>

#include "mgk/cublas_check.h"

namespace mgk::lt {

// A cuBLASLt handle, destroyed with its owner.
class Handle {
 public:
  Handle() = default;
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() {
    if (h_) cublasLtDestroy(h_);
  }
  cublasStatus_t create() { return h_ ? CUBLAS_STATUS_SUCCESS : cublasLtCreate(&h_); }
  operator cublasLtHandle_t() const { return h_; }

 private:
  cublasLtHandle_t h_ = nullptr;
};

struct GemmShape {
  int64_t m = 0, n = 0, k = 0;
  bool trans_a = false;  // A is stored k x m (row-major) and used transposed
  bool trans_b = false;  // B is stored n x k (row-major) and used transposed
  int64_t lda = 0, ldb = 0, ldd = 0;  // row strides in elements; 0: packed (no padding)
  cudaDataType_t d_type = CUDA_R_16BF;
  unsigned align = 256;  // the alignment in bytes every pointer given to run() will have
};

class Gemm {
 public:
  Gemm() = default;
  Gemm(const Gemm&) = delete;
  Gemm& operator=(const Gemm&) = delete;
  ~Gemm() { reset(); }

  // Plans `s` on `lt` with a workspace of `workspace_bytes`. `algo` picks the algo-th
  // candidate of the heuristic, which orders them by expected speed (0: its choice; the
  // compute benchmark times the others). CUBLAS_STATUS_NOT_SUPPORTED when the heuristic
  // has fewer candidates.
  cublasStatus_t plan(cublasLtHandle_t lt, const GemmShape& s, size_t workspace_bytes = size_t(32) << 20,
                      int algo = 0) {
    reset();
    shape_ = s;
    lt_ = lt;
    if (s.m <= 0 || s.n <= 0 || s.k <= 0) return CUBLAS_STATUS_INVALID_VALUE;
    const int64_t lda = s.lda ? s.lda : (s.trans_a ? s.m : s.k);
    const int64_t ldb = s.ldb ? s.ldb : (s.trans_b ? s.k : s.n);
    const int64_t ldd = s.ldd ? s.ldd : s.n;
    // Row-major D = op(A) op(B) is column-major D^T = op(B)^T op(A)^T, and a row-major
    // matrix is its transpose in column-major: cuBLASLt gets B as its first operand.
    cublasOperation_t op_first = s.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t op_second = s.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasStatus_t st;
    if ((st = cublasLtMatmulDescCreate(&op_, CUBLAS_COMPUTE_32F, CUDA_R_32F)) != CUBLAS_STATUS_SUCCESS) return st;
    cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSA, &op_first, sizeof(op_first));
    cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSB, &op_second, sizeof(op_second));
    // Column-major layouts (rows, cols, leading dimension) of the stored matrices.
    if ((st = cublasLtMatrixLayoutCreate(&first_, CUDA_R_16BF, s.trans_b ? s.k : s.n, s.trans_b ? s.n : s.k, ldb)))
      return st;
    if ((st = cublasLtMatrixLayoutCreate(&second_, CUDA_R_16BF, s.trans_a ? s.m : s.k, s.trans_a ? s.k : s.m, lda)))
      return st;
    if ((st = cublasLtMatrixLayoutCreate(&out_, s.d_type, s.n, s.m, ldd))) return st;
    cublasLtMatmulPreference_t pref = nullptr;
    if ((st = cublasLtMatmulPreferenceCreate(&pref))) return st;
    uint64_t ws = workspace_bytes;
    uint32_t align = s.align;
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws));
    // A split-K algorithm may add its partial products in the output type: for a bf16 D
    // that rounds every partial to bf16, far outside the suite's tolerance for fp32
    // accumulation. Only reductions in the compute type (fp32) are allowed.
    uint32_t reductions = CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &reductions,
                                         sizeof(reductions));
    for (auto attr : {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
      cublasLtMatmulPreferenceSetAttribute(pref, attr, &align, sizeof(align));
    constexpr int kMaxAlgos = 16;
    cublasLtMatmulHeuristicResult_t found[kMaxAlgos] = {};
    int count = 0;
    st = cublasLtMatmulAlgoGetHeuristic(lt, op_, first_, second_, out_, out_, pref, kMaxAlgos, found, &count);
    cublasLtMatmulPreferenceDestroy(pref);
    if (st != CUBLAS_STATUS_SUCCESS) return st;
    if (algo < 0 || algo >= count) return CUBLAS_STATUS_NOT_SUPPORTED;
    algo_ = found[algo].algo;
    workspace_bytes_ = found[algo].workspaceSize;
    if (workspace_bytes_ && cudaMalloc(&workspace_, workspace_bytes_) != cudaSuccess) return CUBLAS_STATUS_ALLOC_FAILED;
    return CUBLAS_STATUS_SUCCESS;
  }

  // D = op(A) op(B) on `stream`. CUBLAS_STATUS_INVALID_VALUE for a pointer less
  // aligned than planned (the plan's algorithm may need it).
  cublasStatus_t run(const void* a, const void* b, void* d, cudaStream_t stream) const {
    if (!op_) return CUBLAS_STATUS_NOT_INITIALIZED;
    for (const void* p : {a, b, static_cast<const void*>(d)})
      if (reinterpret_cast<uintptr_t>(p) % shape_.align) return CUBLAS_STATUS_INVALID_VALUE;
    const float alpha = 1.0f, beta = 0.0f;
    return cublasLtMatmul(lt_, op_, &alpha, b, first_, a, second_, &beta, d, out_, d, out_, &algo_, workspace_,
                          workspace_bytes_, stream);
  }

  void reset() {
    if (op_) cublasLtMatmulDescDestroy(op_);
    if (first_) cublasLtMatrixLayoutDestroy(first_);
    if (second_) cublasLtMatrixLayoutDestroy(second_);
    if (out_) cublasLtMatrixLayoutDestroy(out_);
    if (workspace_) cudaFree(workspace_);
    op_ = nullptr;
    first_ = second_ = out_ = nullptr;
    workspace_ = nullptr;
    workspace_bytes_ = 0;
  }

 private:
  GemmShape shape_;
  cublasLtHandle_t lt_ = nullptr;
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t first_ = nullptr, second_ = nullptr, out_ = nullptr;
  cublasLtMatmulAlgo_t algo_ = {};
  void* workspace_ = nullptr;
  size_t workspace_bytes_ = 0;
};

}  // namespace mgk::lt
