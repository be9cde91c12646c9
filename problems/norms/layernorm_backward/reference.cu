// Reference, as ParallelKernelBench's PyTorch code computes it: per column, the sum over
// this rank's rows of dy (d_beta) and of bf16(dy * x_hat) (d_gamma), accumulated in fp32 and
// rounded to bf16, by a column-reduction kernel (row chunks in parallel, then their sum);
// then NCCL all-reduces both (bf16, one group).
#include <algorithm>

#include "mgk/reference_kit.h"

namespace {

constexpr int kThreads = 128;
constexpr int kVec = 8;  // columns per thread when N is a multiple of 8 (16-byte loads)

int64_t columns_per_block(int64_t n) { return n % kVec == 0 ? int64_t(kThreads) * kVec : kThreads; }

// Sums of one chunk of rows: partial[chunk][0][n] = sum bf16(dy x), partial[chunk][1][n] = sum dy.
template <int kCols>
__global__ void column_sums_kernel(const __nv_bfloat16* x, const __nv_bfloat16* dy, float* partial, int64_t m,
                                   int64_t n, int64_t rows_per_chunk) {
  const int64_t col = (int64_t(blockIdx.x) * kThreads + threadIdx.x) * kCols;
  if (col >= n) return;
  const int64_t r0 = blockIdx.y * rows_per_chunk, r1 = std::min(m, r0 + rows_per_chunk);
  float gamma[kCols] = {}, beta[kCols] = {};
  for (int64_t r = r0; r < r1; ++r) {
    __nv_bfloat16 xv[kCols], gv[kCols];
    if (kCols == kVec) {
      *reinterpret_cast<uint4*>(xv) = *reinterpret_cast<const uint4*>(x + r * n + col);
      *reinterpret_cast<uint4*>(gv) = *reinterpret_cast<const uint4*>(dy + r * n + col);
    } else {
      xv[0] = x[r * n + col];
      gv[0] = dy[r * n + col];
    }
    for (int k = 0; k < kCols; ++k) {
      gamma[k] += __bfloat162float(__hmul(gv[k], xv[k]));  // the product is a bf16 tensor in PyTorch
      beta[k] += __bfloat162float(gv[k]);
    }
  }
  float* out = partial + blockIdx.y * 2 * n;
  for (int k = 0; k < kCols; ++k) {
    out[col + k] = gamma[k];
    out[n + col + k] = beta[k];
  }
}

// Sums the chunks in order and rounds: d_gamma and d_beta (bf16).
__global__ void finish_kernel(const float* partial, int chunks, int64_t n, __nv_bfloat16* d_gamma,
                              __nv_bfloat16* d_beta) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    float g = 0, b = 0;
    for (int c = 0; c < chunks; ++c) {
      g += partial[c * 2 * n + i];
      b += partial[c * 2 * n + n + i];
    }
    d_gamma[i] = __float2bfloat16_rn(g);
    d_beta[i] = __float2bfloat16_rn(b);
  }
}

// What the oracle needs per rank r and column n, exactly, summed over that rank's rows:
// [0] dy x, [1] |dy x|, [2] (dy x)^2, [3] dy, [4] |dy|  (stats[(r * 5 + k) * n + col]).
constexpr int kStats = 5;
constexpr int64_t kOracleRows = 64;

__global__ void exact_column_stats_kernel(mgk_input_gen gx, mgk_input_gen gdy, int64_t m, int64_t n, double* stats) {
  const int64_t col = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int r = blockIdx.y;
  if (col >= n) return;
  const int64_t r0 = int64_t(blockIdx.z) * kOracleRows, r1 = r0 + kOracleRows < m ? r0 + kOracleRows : m;
  double acc[kStats] = {};
  for (int64_t row = r0; row < r1; ++row) {
    const double d = mgk::gen_value(gdy, r, row * n + col), t = d * mgk::gen_value(gx, r, row * n + col);
    acc[0] += t, acc[1] += fabs(t), acc[2] += t * t, acc[3] += d, acc[4] += fabs(d);
  }
  for (int k = 0; k < kStats; ++k) atomicAdd(&stats[(int64_t(r) * kStats + k) * n + col], acc[k]);
}

struct LayerNormBackward : mgk::Reference {
  using Reference::Reference;
  const int64_t M = dim("M"), N = dim("N");
  mgk::DeviceBuffer<float> partial;  // chunks x 2 x N: fp32 column sums of each chunk of rows
  int chunks = 1;

  int setup() {
    // Enough chunks of rows for about four blocks per SM, each chunk at least 8 rows.
    const int64_t column_blocks = (N + columns_per_block(N) - 1) / columns_per_block(N);
    chunks = int(std::max<int64_t>(
        1, std::min<int64_t>((M + 7) / 8, (4 * ctx->num_sms + column_blocks - 1) / column_blocks)));
    MGK_CUDA_TRY(ctx, partial.allocate(int64_t(chunks) * 2 * N));
    return 0;
  }

  int run(const mgk_tensor* in, const mgk_tensor* out, cudaStream_t st) {
    const auto* x = static_cast<const __nv_bfloat16*>(in[0].data);
    const auto* dy = static_cast<const __nv_bfloat16*>(in[1].data);
    const int64_t rows_per_chunk = (M + chunks - 1) / chunks;
    const dim3 grid(unsigned((N + columns_per_block(N) - 1) / columns_per_block(N)), unsigned(chunks));
    if (N % kVec == 0) column_sums_kernel<kVec><<<grid, kThreads, 0, st>>>(x, dy, partial, M, N, rows_per_chunk);
    else column_sums_kernel<1><<<grid, kThreads, 0, st>>>(x, dy, partial, M, N, rows_per_chunk);
    MGK_LAUNCH_CHECK(ctx);
    auto* d_gamma = static_cast<__nv_bfloat16*>(out[0].data);
    auto* d_beta = static_cast<__nv_bfloat16*>(out[1].data);
    finish_kernel<<<unsigned((N + 255) / 256), 256, 0, st>>>(partial, chunks, N, d_gamma, d_beta);
    MGK_LAUNCH_CHECK(ctx);
    MGK_NCCL_STEP(ctx, ncclGroupStart());
    MGK_NCCL_STEP(ctx, ncclAllReduce(d_gamma, d_gamma, N, ncclBfloat16, ncclSum, comm(), st));
    MGK_NCCL_STEP(ctx, ncclAllReduce(d_beta, d_beta, N, ncclBfloat16, ncclSum, comm(), st));
    MGK_NCCL_STEP(ctx, ncclGroupEnd());
    return 0;
  }

  // Both outputs exactly, from every rank's regenerated inputs. The reference rounds each
  // rank's column sums to bf16 and NCCL rounds every partial sum over ranks (at most W
  // roundings of values no larger than sum_r |P_r|, P_r = rank r's exact column sum), after
  // fp32 sums of M terms; and d_gamma's terms were rounded to bf16 first: independent errors
  // of at most u |dy x| each, whose sum exceeds the factor (>= 3) times 2 u sqrt(sum (dy x)^2)
  // with probability below 2 exp(-18) (Hoeffding). So
  //   S(d_beta)  = sum_r |P_r| + acc(M) sum |dy|
  //   S(d_gamma) = sum_r |G_r| + acc(M) sum |dy x| + 2 sqrt(sum (dy x)^2).
  int oracle(const mgk_oracle_args* a, cudaStream_t st) {
    const int64_t N = this->N;  // by value into the device lambda
    const int W = world();
    mgk::oracle::Scratch scratch(st);
    double* stats = scratch.get<double>(int64_t(W) * kStats * N);
    if (!scratch.ok()) return mgk::set_error(ctx, "oracle: out of device memory");
    MGK_CUDA_TRY(ctx, cudaMemsetAsync(stats, 0, sizeof(double) * W * kStats * N, st));
    const dim3 grid(unsigned((N + 255) / 256), unsigned(W), unsigned((M + kOracleRows - 1) / kOracleRows));
    exact_column_stats_kernel<<<grid, 256, 0, st>>>(a->gens[0], a->gens[1], M, N, stats);
    MGK_LAUNCH_CHECK(ctx);
    auto* gamma = static_cast<double*>(a->expected[0]);
    auto* beta = static_cast<double*>(a->expected[1]);
    float *gamma_scale = a->scale[0], *beta_scale = a->scale[1];
    const double acc = mgk::oracle::fp32_accumulation(M);
    MGK_CUDA_TRY(ctx, mgk::oracle::for_each(
                          N,
                          [=] __device__(int64_t i) {
                            double g = 0, g_parts = 0, g_abs = 0, g_sq = 0, b = 0, b_parts = 0, b_abs = 0;
                            for (int r = 0; r < W; ++r) {
                              const double* s = stats + int64_t(r) * kStats * N + i;
                              g += s[0], g_parts += fabs(s[0]), g_abs += s[N], g_sq += s[2 * N];
                              b += s[3 * N], b_parts += fabs(s[3 * N]), b_abs += s[4 * N];
                            }
                            gamma[i] = g;
                            beta[i] = b;
                            gamma_scale[i] = float(g_parts + acc * g_abs + 2.0 * sqrt(g_sq));
                            beta_scale[i] = float(b_parts + acc * b_abs);
                          },
                          st));
    return 0;
  }
};

}  // namespace

MGK_REFERENCE(LayerNormBackward)
