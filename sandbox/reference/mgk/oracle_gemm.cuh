// Building blocks for the oracles of compute problems: inputs regenerated as fp64 matrices
// (any rank's, exactly the values the harness stored), fp64 GEMMs on cuBLAS together with
// the magnitude sum |a.b| of every dot product, elementwise maps, and the allowance for the
// rounding of long fp32 sums. Link -lcublas.
//
// How the suite's rounding bounds are built (each problem's statement gives its own):
// |got - exact| <= factor . u . scale, where `scale` (the oracle's) adds, for every point
// at which the reference rounds to a narrower type, the magnitude of the value rounded there
// as it reaches the output (a bf16 GEMM output: |C|; a sum of bf16 partials: the sum of the
// partials' |.|); plus, for a sum of n terms accumulated in fp32, fp32_accumulation(n)
// times the sum of the terms' |.|. The factor counts the rounding steps and leaves a margin.
// Bounds in |C| rather than in sum |a.b| stay tight as K grows: sum |a.b| grows like K
// while |C| grows like sqrt(K), so a bound in sum |a.b| alone lets zeros pass at large K.
// The same holds for the values a chain rounds before its next GEMM (h and a = act(h) of an
// MLP, then y = a W2): their rounding errors reach y_j as sum_f err_f W2[f, j], a sum of
// independent terms of mean zero, each at most u p_f |W2[f, j]| (p_f: the magnitudes rounded
// at f, carried through the activation's slope). That sum is at most
// kRoundingWalk u sqrt(sum_f (p_f W2[f, j])^2) but with probability 2 exp(-kRoundingWalk^2 / 2)
// (Hoeffding), and with the problem's factor of 2 multiplying it, 2 exp(-2 kRoundingWalk^2)
// (3e-14 at 4): a bound of sum_f p_f |W2[f, j]| instead grows like F where the error grows
// like sqrt(F), and at F = 4096 it hides a wrong activation (GELU for SiLU).
#pragma once
#include <cublas_v2.h>

#include <cmath>
#include <vector>

#include "mgk/cublas_check.h"
#include "mgk/oracle.cuh"

namespace mgk::oracle {

inline constexpr double kBf16U = 0x1p-8;  // bf16's unit roundoff
inline constexpr double kF32U = 0x1p-24;
// The multiple of the root-sum-square of independent rounding errors that a bound allows (see
// above): 4, so that with a factor of 2 the reference fails by chance with probability below
// 3e-14 per element, while its actual worst error stays near a sixth of the bound
// (tests/problems/tolerance_model_test.cc models combined_sharded_gemms).
inline constexpr double kRoundingWalk = 4;

// The rounding error of a sum of n terms accumulated in fp32 (in any order), per unit of
// sum |terms|, in units of `u_out`: the worst case n.u32, or when smaller the probabilistic
// bound lambda.sqrt(n).u32 with lambda = 4 (Higham & Mary, SISC 2019, Thm 3.1). The
// problem's factor (at least 2) multiplies it, so lambda is at least 8: it fails with
// probability below 2n.exp(-32) (under 1e-9 for n up to 1e5), and that while assuming every
// partial sum as large as sum |terms|, which random data never comes near (partial sums grow
// like sqrt(n)): a tensor core's truncating accumulation stays below it too.
__host__ __device__ inline double fp32_accumulation(int64_t n, double u_out = kBf16U) {
  const double nn = double(n);
  return fmin(nn, 4.0 * sqrt(nn)) * kF32U / u_out;
}

// Device memory for one oracle call, freed (stream-ordered) when it goes out of scope.
class Scratch {
 public:
  explicit Scratch(cudaStream_t s) : stream_(s) {}
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  ~Scratch() {
    for (void* p : blocks_) cudaFreeAsync(p, stream_);
  }
  // n elements of T, or nullptr (then ok() is false).
  template <class T>
  T* get(int64_t n) {
    void* p = nullptr;
    if (cudaMallocAsync(&p, size_t(n > 0 ? n : 1) * sizeof(T), stream_) != cudaSuccess) {
      ok_ = false;
      return nullptr;
    }
    blocks_.push_back(p);
    return static_cast<T*>(p);
  }
  bool ok() const { return ok_; }

 private:
  cudaStream_t stream_;
  std::vector<void*> blocks_;
  bool ok_ = true;
};

// The oracle's own cuBLAS handle, made on first use; a reference's state owns it. (blas_on
// below gives it with the error set when cuBLAS cannot start.)
class Blas {
 public:
  Blas() = default;
  Blas(const Blas&) = delete;
  Blas& operator=(const Blas&) = delete;
  ~Blas() {
    if (h_) cublasDestroy(h_);
  }
  // The handle bound to `s`; nullptr when cuBLAS cannot start.
  cublasHandle_t on(cudaStream_t s) {
    if (!h_ && cublasCreate(&h_) != CUBLAS_STATUS_SUCCESS) h_ = nullptr;
    if (h_) cublasSetStream(h_, s);
    return h_;
  }

 private:
  cublasHandle_t h_ = nullptr;
};

// `blas`'s handle on `s`, or nullptr with ctx->error set.
inline cublasHandle_t blas_on(mgk_ctx* ctx, Blas& blas, cudaStream_t s) {
  cublasHandle_t h = blas.on(s);
  if (!h) set_error(ctx, "oracle: cuBLAS did not start");
  return h;
}

template <class F>
__global__ void for_each_kernel(int64_t n, F f) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) f(i);
}

// f(i) for every i < n, on the device (f: `[=] __device__ (int64_t i) {...}`).
template <class F>
cudaError_t for_each(int64_t n, F f, cudaStream_t s) {
  if (n <= 0) return cudaSuccess;
  for_each_kernel<<<grid_for(n), 256, 0, s>>>(n, f);
  return cudaGetLastError();
}

// out[i * ldo + j] = element (r0 + i, c0 + j) of input `g` on `rank`, read as a row-major
// matrix with `ld` elements per row; i < rows, j < cols.
template <class Instantiated = void>  // a kernel only where it is called
cudaError_t regen(const mgk_input_gen& g, int rank, int64_t ld, int64_t r0, int64_t c0, int64_t rows,
                  int64_t cols, double* out, int64_t ldo, cudaStream_t s) {
  if (cols <= 0) return cudaSuccess;
  return for_each(
      rows * cols,
      [=] __device__(int64_t i) {
        const int64_t r = i / cols, c = i % cols;
        out[r * ldo + c] = mgk::gen_value(g, rank, (r0 + r) * ld + c0 + c);
      },
      s);
}

// Every rank's block of rows [row0, row0 + rows) of input `g` (each rank's a row-major matrix
// of `cols` columns), side by side: out (rows x W * cols) holds rank r's block at columns
// [r * cols, (r + 1) * cols): the activations whose columns the ranks share.
template <class Instantiated = void>  // a kernel only where it is called
cudaError_t regen_side_by_side(const mgk_input_gen& g, int world, int64_t cols, int64_t row0, int64_t rows,
                               double* out, cudaStream_t s) {
  for (int r = 0; r < world; ++r) {
    cudaError_t e = regen(g, r, cols, row0, 0, rows, cols, out + r * cols, world * cols, s);
    if (e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

template <class Instantiated = void>  // a kernel only where it is called
cudaError_t absolute(double* x, int64_t n, cudaStream_t s) {
  return for_each(n, [=] __device__(int64_t i) { x[i] = fabs(x[i]); }, s);
}

template <class Instantiated = void>  // a kernel only where it is called
cudaError_t square(double* x, int64_t n, cudaStream_t s) {
  return for_each(n, [=] __device__(int64_t i) { x[i] = x[i] * x[i]; }, s);
}

// Row-major fp64 C[m x n] = op(A) op(B) + beta C: op(A) is m x k (A stored m x k, or k x m
// when `ta`), op(B) k x n (B stored k x n, or n x k when `tb`); ld* are row strides.
inline cublasStatus_t dgemm(cublasHandle_t h, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const double* a,
                            int64_t lda, const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  const double one = 1.0;
  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T.
  return cublasDgemm_64(h, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, n, m, k, &one, b, ldb, a,
                        lda, &beta, c, ldc);
}

// One fp64 operand of a GEMM: `elems` elements at `p`, a row-major matrix with `ld` elements
// per row, used transposed when `t` (see dgemm).
struct Operand {
  double* p;
  int64_t ld;
  int64_t elems;
  bool t = false;
};

// The exact products of a GEMM and the magnitude of each of its dot products:
//   c = op(A) op(B) + beta_c c,    mag = |op(A)| |op(B)| + beta_mag mag   (mag may be null)
// A and B are scratch: made absolute in place. A failed launch of the absolute value is
// CUBLAS_STATUS_EXECUTION_FAILED.
template <class Instantiated = void>  // a kernel only where it is called
cublasStatus_t product_and_magnitude(cublasHandle_t h, int64_t m, int64_t n, int64_t k, Operand a, Operand b,
                                     double* c, double beta_c, double* mag, double beta_mag, int64_t ldc,
                                     cudaStream_t s) {
  cublasStatus_t st = dgemm(h, a.t, b.t, m, n, k, a.p, a.ld, b.p, b.ld, beta_c, c, ldc);
  if (st != CUBLAS_STATUS_SUCCESS || !mag) return st;
  if (absolute(a.p, a.elems, s) != cudaSuccess || absolute(b.p, b.elems, s) != cudaSuccess)
    return CUBLAS_STATUS_EXECUTION_FAILED;
  return dgemm(h, a.t, b.t, m, n, k, a.p, a.ld, b.p, b.ld, beta_mag, mag, ldc);
}

// sum += term and abs_sum += |term| elementwise (both set when `first`).
template <class Instantiated = void>  // a kernel only where it is called
cudaError_t add_rank_term(const double* term, bool first, double* sum, double* abs_sum, int64_t n,
                          cudaStream_t s) {
  return for_each(
      n,
      [=] __device__(int64_t i) {
        sum[i] = (first ? 0.0 : sum[i]) + term[i];
        abs_sum[i] = (first ? 0.0 : abs_sum[i]) + fabs(term[i]);
      },
      s);
}

// scale = |rounded| + weight * accumulated, as the float array the harness reads: `rounded`
// the magnitude of what the reference rounds (for a result rounded once, the exact result
// itself), `accumulated` the sum |terms| of its fp32 accumulation.
template <class Instantiated = void>  // a kernel only where it is called
cudaError_t combine_scale(const double* rounded, double weight, const double* accumulated, float* scale,
                          int64_t n, cudaStream_t s) {
  return for_each(n, [=] __device__(int64_t i) { scale[i] = float(fabs(rounded[i]) + weight * accumulated[i]); }, s);
}

// A GEMM the reference rounds once, to bf16, at the end: expected = op(A) op(B) (m x n,
// packed) and scale = |expected| + fp32_accumulation(k) |op(A)| |op(B)|. A and B are
// scratch (made absolute). 0, or non-zero with ctx->error set.
template <class Instantiated = void>  // a kernel only where it is called
int product_rounded_once(mgk_ctx* ctx, Blas& blas, int64_t m, int64_t n, int64_t k, Operand a, Operand b,
                         double* expected, float* scale, cudaStream_t st) {
  Scratch scratch(st);
  double* mag = scratch.get<double>(m * n);
  if (!scratch.ok()) return set_error(ctx, "oracle: out of device memory");
  cublasHandle_t h = blas_on(ctx, blas, st);
  if (!h) return 1;
  MGK_CUBLAS_TRY(ctx, product_and_magnitude(h, m, n, k, a, b, expected, 0, mag, 0, n, st));
  MGK_CUDA_TRY(ctx, combine_scale(expected, fp32_accumulation(k), mag, scale, m * n, st));
  return 0;
}

// What a reduction over the ranks of per-rank GEMMs P_r = A_r B_r (m x n, k terms) must
// give, for a reference that rounds each P_r to bf16 and then every partial sum of the
// reduction (at most W roundings, each of a value no larger than sum_r |P_r|):
//   expected = sum_r P_r,   scale = sum_r |P_r| + fp32_accumulation(k) sum_r |A_r| |B_r|.
// `load(r, A, B)` fills rank r's operands (A m x k, B k x n, row-major fp64) and returns a
// cudaError_t. 0, or non-zero with ctx->error set.
template <class Load>
int sum_of_rank_products(mgk_ctx* ctx, Blas& blas, int64_t m, int64_t n, int64_t k, Load load, double* expected,
                         float* scale, cudaStream_t st) {
  const int64_t mn = m * n;
  Scratch scratch(st);
  double *A = scratch.get<double>(m * k), *B = scratch.get<double>(k * n), *P = scratch.get<double>(mn),
         *mag = scratch.get<double>(mn), *abs_sum = scratch.get<double>(mn);
  if (!scratch.ok()) return set_error(ctx, "oracle: out of device memory");
  cublasHandle_t h = blas_on(ctx, blas, st);
  if (!h) return 1;
  for (int r = 0; r < ctx->world_size; ++r) {
    MGK_CUDA_TRY(ctx, load(r, A, B));
    MGK_CUBLAS_TRY(ctx, product_and_magnitude(h, m, n, k, {A, k, m * k}, {B, n, k * n}, P, 0, mag, r ? 1 : 0, n, st));
    MGK_CUDA_TRY(ctx, add_rank_term(P, r == 0, expected, abs_sum, mn, st));
  }
  MGK_CUDA_TRY(ctx, combine_scale(abs_sum, fp32_accumulation(k), mag, scale, mn, st));
  return 0;
}

}  // namespace mgk::oracle
