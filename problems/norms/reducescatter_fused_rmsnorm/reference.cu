// Reference, as ParallelKernelBench's PyTorch code computes it: NCCL reduce-scatters the bf16
// addends (this rank's chunk of the sum, rounded to bf16 at every hop), then a row kernel
// divides by W in bf16 (PyTorch's div_ multiplies by 1/W and rounds), takes the row's mean
// square in fp32, and writes bf16(m * rsqrt(ms + eps) * gamma).
#include "mgk/reference_kit.h"

namespace {

constexpr float kEps = 1e-5f;
constexpr int kThreads = 128;

// The sum over a block's threads; every thread gets it.
__device__ float block_sum(float v) {
  __shared__ float warps[kThreads / 32];
  for (int o = 16; o; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  if (threadIdx.x % 32 == 0) warps[threadIdx.x / 32] = v;
  __syncthreads();
  float total = 0;
  for (int w = 0; w < kThreads / 32; ++w) total += warps[w];
  __syncthreads();
  return total;
}

// One block per row: m = bf16(sum * (1 / W)), then y = bf16(m * rsqrt(mean(m^2) + eps) * gamma).
__global__ void rms_norm_kernel(const __nv_bfloat16* chunk, const __nv_bfloat16* gamma, __nv_bfloat16* y, int64_t h,
                                float inv_world) {
  const __nv_bfloat16* row = chunk + blockIdx.x * h;
  float acc = 0;
  for (int64_t j = threadIdx.x; j < h; j += kThreads) {
    const float m = __bfloat162float(__float2bfloat16_rn(__bfloat162float(row[j]) * inv_world));
    acc += m * m;
  }
  const float rms = rsqrtf(block_sum(acc) / float(h) + kEps);
  for (int64_t j = threadIdx.x; j < h; j += kThreads) {
    const float m = __bfloat162float(__float2bfloat16_rn(__bfloat162float(row[j]) * inv_world));
    y[blockIdx.x * h + j] = __float2bfloat16_rn(m * rms * __bfloat162float(gamma[j]));
  }
}

// Per row i: ms[i] = mean of m^2 and me[i] = mean of |m| e (see the oracle).
__global__ void row_means_kernel(const double* m, const double* e, int64_t h, double* ms, double* me) {
  __shared__ double part[2][kThreads];
  double a = 0, b = 0;
  for (int64_t j = threadIdx.x; j < h; j += kThreads) {
    const double v = m[blockIdx.x * h + j];
    a += v * v;
    b += fabs(v) * e[blockIdx.x * h + j];
  }
  part[0][threadIdx.x] = a, part[1][threadIdx.x] = b;
  __syncthreads();
  for (int w = kThreads / 2; w; w /= 2) {
    if (threadIdx.x < w) part[0][threadIdx.x] += part[0][threadIdx.x + w], part[1][threadIdx.x] += part[1][threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) ms[blockIdx.x] = part[0][0] / double(h), me[blockIdx.x] = part[1][0] / double(h);
}

struct ReduceScatterFusedRmsNorm : mgk::Reference {
  using Reference::Reference;
  const int64_t rows = dim("ROWS"), h = dim("H");
  mgk::DeviceBuffer<__nv_bfloat16> chunk;  // ROWS x H: this rank's chunk of the sum

  int setup() {
    MGK_CUDA_TRY(ctx, chunk.allocate(rows * h));
    return 0;
  }

  int run(const mgk_tensor* in, const mgk_tensor* out, cudaStream_t st) {
    MGK_NCCL_STEP(ctx, ncclReduceScatter(in[0].data, chunk, size_t(rows * h), ncclBfloat16, ncclSum, comm(), st));
    rms_norm_kernel<<<unsigned(rows), kThreads, 0, st>>>(chunk, static_cast<const __nv_bfloat16*>(in[1].data),
                                                          static_cast<__nv_bfloat16*>(out[0].data), h,
                                                          1.0f / float(world()));
    MGK_LAUNCH_CHECK(ctx);
    return 0;
  }

  // m = (sum over ranks of chunk R of x) / W exactly, y = gamma m / sqrt(mean(m^2) + eps). The
  // error of m_j in units of u is at most e_j = (W - 1) / W sum_s |x_s| (the ring's W - 1
  // roundings, each of a partial no larger than sum_s |x_s|, then divided by W) + |m_j| (the
  // division's rounding). It reaches y directly (|gamma| e / sqrt(d), d = ms + eps) and through
  // the mean square (|y| mean(|m| e) / d), and y is rounded once (|y|): S is their sum.
  int oracle(const mgk_oracle_args* a, cudaStream_t st) {
    const int64_t h = this->h, n = rows * h;  // by value into the device lambdas
    const int world = this->world(), rank = this->rank();
    mgk::oracle::Scratch scratch(st);
    double *m = scratch.get<double>(n), *e = scratch.get<double>(n), *ms = scratch.get<double>(rows),
           *me = scratch.get<double>(rows);
    if (!scratch.ok()) return mgk::set_error(ctx, "oracle: out of device memory");
    const mgk_input_gen gx = a->gens[0], gg = a->gens[1];
    MGK_CUDA_TRY(ctx, mgk::oracle::for_each(
                          n,
                          [=] __device__(int64_t i) {
                            double sum = 0, mag = 0;
                            for (int s = 0; s < world; ++s) {
                              const double v = mgk::gen_value(gx, s, rank * n + i);
                              sum += v, mag += fabs(v);
                            }
                            m[i] = sum / world;
                            e[i] = double(world - 1) / world * mag + fabs(m[i]);
                          },
                          st));
    row_means_kernel<<<unsigned(rows), kThreads, 0, st>>>(m, e, h, ms, me);
    MGK_LAUNCH_CHECK(ctx);
    auto* expected = static_cast<double*>(a->expected[0]);
    float* scale = a->scale[0];
    MGK_CUDA_TRY(ctx, mgk::oracle::for_each(
                          n,
                          [=] __device__(int64_t i) {
                            const int64_t row = i / h;
                            const double d = ms[row] + double(kEps), g = mgk::gen_value(gg, rank, i % h);
                            const double y = g * m[i] / sqrt(d);
                            expected[i] = y;
                            scale[i] = float(fabs(y) + fabs(g) * e[i] / sqrt(d) + fabs(y) * me[row] / d);
                          },
                          st));
    return 0;
  }
};

}  // namespace

MGK_REFERENCE(ReduceScatterFusedRmsNorm)
