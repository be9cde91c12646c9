// Mutant of tests/gpu/candidates/tp/tp_muon_orthogonalization.cu. Class: off by one in a counter, an index or a rank offset.
// Double-buffering slip, the step index of an operand off by one: U X is formed with the previous step's X (U_k X_{k-1}; at step 0 X_0),
// while a X and G use the current one. The iteration then diverges (a non-finite or huge result).
//
// The plain candidate's description:
// Plain: ParallelKernelBench's computation written out. Each rank converts its shard to fp32
// and writes its sum of squares into symmetric workspace; after a barrier it adds every rank's
// sum (rank order) and divides by max(sqrt, 1e-7). Each of the five steps: the rank's partial
// Gram matrix X X^T (cublasSgemm) into symmetric workspace, a barrier, the sum of every rank's
// partial (fp32, rank order), then U = b G + c G G and X <- a X + U X (cublasSgemm and two
// elementwise kernels). The result is rounded to bf16 once.
#include "../../../candidates/plain_compute.cuh"

namespace {
constexpr int kThreads = 256;
constexpr int kSteps = 5;
constexpr float kCoefficients[kSteps][3] = {{4.0848f, -6.8946f, 2.9270f},
                                            {3.9505f, -6.3029f, 2.6377f},
                                            {3.7418f, -5.5913f, 2.3037f},
                                            {2.8769f, -3.1427f, 1.2046f},
                                            {2.8366f, -3.0525f, 1.2012f}};

// xf = float(x); *sum = the sum of xf^2 (one block).
__global__ void convert_kernel(const __nv_bfloat16* x, float* xf, int64_t n, float* sum) {
  __shared__ float part[kThreads];
  float acc = 0;
  for (int64_t i = threadIdx.x; i < n; i += kThreads) {
    const float v = __bfloat162float(x[i]);
    xf[i] = v;
    acc += v * v;
  }
  part[threadIdx.x] = acc;
  __syncthreads();
  for (int w = kThreads / 2; w; w /= 2) {
    if (threadIdx.x < w) part[threadIdx.x] += part[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) *sum = part[0];
}

// xf /= max(sqrt(sum over ranks [first, end) of their sums), 1e-7).
__global__ void normalize_kernel(float* xf, int64_t n, void* const* sums, int first, int end) {
  float total = 0;
  for (int r = first; r < end; ++r) total += *static_cast<const float*>(sums[r]);
  const float inv = 1.0f / fmaxf(sqrtf(total), 1e-7f);
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    xf[i] *= inv;
}

// u = b g + c gg.
__global__ void update_matrix_kernel(const float* g, const float* gg, float b, float c, float* u, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    u[i] = b * g[i] + c * gg[i];
}

// x = a x + ux.
__global__ void combine_kernel(float* x, const float* ux, float a, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    x[i] = a * x[i] + ux[i];
}

__global__ void to_bf16_kernel(const float* xf, __nv_bfloat16* y, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    y[i] = __float2bfloat16(xf[i]);
}

// Row-major fp32 C[m x n] = A[m x k] B[k x n] (B used transposed, stored n x k, when tb).
cublasStatus_t sgemm(mgk_ctx* ctx, cudaStream_t st, bool tb, int64_t m, int64_t n, int64_t k, const float* a,
                     const float* b, float* c) {
  cublasHandle_t h = plain::state(ctx).blas;
  cublasSetStream(h, st);
  const float one = 1, zero = 0;
  // Row-major C = A op(B) is column-major C^T = op(B)^T A^T.
  return cublasSgemm(h, tb ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N, int(n), int(m), int(k), &one, b,
                     int(tb ? k : n), a, int(k), &zero, c, int(n));
}
}  // namespace

// Symmetric: this rank's sum of squares, its partial Gram matrix. Private: X, U X (M x NL),
// G, G G, U (M x M), all fp32.
MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  const size_t M = size_t(mgk::dim(ctx, "M")), NL = size_t(mgk::dim(ctx, "NL"));
  return plain::setup(ctx, {4, M * M * 4}, {M * NL * 4, M * NL * 4, M * M * 4, M * M * 4, M * M * 4, M * NL * 4});
}
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { plain::teardown(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  const int64_t M = mgk::dim(ctx, "M"), NL = mgk::dim(ctx, "NL"), n = M * NL;
  plain::State& st = plain::state(ctx);
  const mgk_sym_buffer &sums = st.sym[0], &partial = st.sym[1];
  auto* x = static_cast<float*>(st.local[0]);
  auto* ux = static_cast<float*>(st.local[1]);
  auto* g = static_cast<float*>(st.local[2]);
  auto* gg = static_cast<float*>(st.local[3]);
  auto* u = static_cast<float*>(st.local[4]);
  auto* prev = static_cast<float*>(st.local[5]);  // X of the previous step
  const int first = plain::first_source(ctx), end = plain::end_source(ctx);
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // no peer still reads this rank's workspace of the last call
  convert_kernel<<<1, kThreads, 0, s>>>(static_cast<const __nv_bfloat16*>(in[0].data), x, n,
                                        static_cast<float*>(sums.local));
  MGK_LAUNCH_CHECK(ctx);
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every rank's sum is written
  normalize_kernel<<<plain::blocks_for(n), kThreads, 0, s>>>(x, n, sums.peers, first, end);
  MGK_LAUNCH_CHECK(ctx);
  MGK_CUDA_TRY(ctx, cudaMemcpyAsync(prev, x, size_t(n) * 4, cudaMemcpyDeviceToDevice, s));
  for (int k = 0; k < kSteps; ++k) {
    const float a = kCoefficients[k][0], b = kCoefficients[k][1], c = kCoefficients[k][2];
    MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // no peer still reads this rank's partial of the last step
    MGK_CUBLAS_TRY(ctx, sgemm(ctx, s, true, M, M, NL, x, x, static_cast<float*>(partial.local)));  // X X^T
    MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every rank's partial is written
    MGK_CUDA_TRY(ctx, simple::sum(MGK_F32, partial.peers + first, end - first, 0, g, M * M, s));  // G
    MGK_CUBLAS_TRY(ctx, sgemm(ctx, s, false, M, M, M, g, g, gg));  // G G
    update_matrix_kernel<<<plain::blocks_for(M * M), kThreads, 0, s>>>(g, gg, b, c, u, M * M);
    MGK_LAUNCH_CHECK(ctx);
    MGK_CUBLAS_TRY(ctx, sgemm(ctx, s, false, M, NL, M, u, prev, ux));  // U X (stale X)
    MGK_CUDA_TRY(ctx, cudaMemcpyAsync(prev, x, size_t(n) * 4, cudaMemcpyDeviceToDevice, s));
    combine_kernel<<<plain::blocks_for(n), kThreads, 0, s>>>(x, ux, a, n);
    MGK_LAUNCH_CHECK(ctx);
  }
  to_bf16_kernel<<<plain::blocks_for(n), kThreads, 0, s>>>(x, static_cast<__nv_bfloat16*>(out[0].data), n);
  MGK_LAUNCH_CHECK(ctx);
  return 0;
}
