// Reference, as ParallelKernelBench's PyTorch code computes it, with its element-wise steps
// fused: one kernel quantises every block of B elements to int8 and back to fp32 (a warp
// per block: the block's max |x|, then round(x / scale) clamped to +-127, times the scale),
// NCCL all-reduces the fp32 reconstructions, and a kernel divides by W and rounds to bf16.
#include <algorithm>

#include "mgk/reference_kit.h"

namespace {

constexpr int kThreads = 256;

// The block's scale and the dequantised value of x under it, as specified (fp32).
__host__ __device__ inline float block_scale(float amax) { return fmaxf(amax, 1e-8f) / 127.0f; }
__device__ inline float dequantise(float x, float scale) { return fminf(fmaxf(rintf(x / scale), -127.0f), 127.0f) * scale; }

// One warp per block of b elements (the last one shorter).
__global__ void quant_dequant_kernel(const __nv_bfloat16* x, float* rec, int64_t n, int64_t b) {
  const int lane = threadIdx.x % 32;
  const int64_t blocks = (n + b - 1) / b;
  for (int64_t blk = (blockIdx.x * int64_t(blockDim.x) + threadIdx.x) / 32; blk < blocks;
       blk += int64_t(gridDim.x) * blockDim.x / 32) {
    const int64_t begin = blk * b, end = std::min(n, begin + b);
    float amax = 0;
    for (int64_t i = begin + lane; i < end; i += 32) amax = fmaxf(amax, fabsf(__bfloat162float(x[i])));
    for (int o = 16; o; o /= 2) amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, o));
    const float scale = block_scale(amax);
    for (int64_t i = begin + lane; i < end; i += 32) rec[i] = dequantise(__bfloat162float(x[i]), scale);
  }
}

// PyTorch's div_ by a Python number multiplies by its reciprocal; then .to(bf16).
__global__ void mean_kernel(const float* acc, __nv_bfloat16* out, int64_t n, float inv_world) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    out[i] = __float2bfloat16_rn(acc[i] * inv_world);
}

unsigned grid(int64_t threads) { return unsigned(std::min<int64_t>((threads + kThreads - 1) / kThreads, 132 * 16)); }

struct QuantizedGradAllReduce : mgk::Reference {
  using Reference::Reference;
  const int64_t N = dim("N"), B = dim("B");
  mgk::DeviceBuffer<float> acc;  // N fp32 reconstructions, then their sum

  int setup() {
    MGK_CUDA_TRY(ctx, acc.allocate(N));
    return 0;
  }

  int run(const mgk_tensor* in, const mgk_tensor* out, cudaStream_t st) {
    quant_dequant_kernel<<<grid((N + B - 1) / B * 32), kThreads, 0, st>>>(static_cast<const __nv_bfloat16*>(in[0].data),
                                                                          acc, N, B);
    MGK_LAUNCH_CHECK(ctx);
    MGK_NCCL_STEP(ctx, ncclAllReduce(acc, acc, size_t(N), ncclFloat32, ncclSum, comm(), st));
    mean_kernel<<<grid(N), kThreads, 0, st>>>(acc, static_cast<__nv_bfloat16*>(out[0].data), N, 1.0f / float(world()));
    MGK_LAUNCH_CHECK(ctx);
    return 0;
  }

  // The exact mean of the reconstructions: every rank's block scales from its regenerated
  // gradient (fp32, the specified formula), then per element q in fp32 as specified, the sum
  // of q * scale over ranks in fp64. S (in units of u = 2^-8) = |mean| + the fp32 sum of W
  // terms and its division (W 2^-24 / u of sum |rec| / W) + one quantisation step (scale / W)
  // for each rank whose x / scale is so close to a half-integer that another correct way of
  // dividing may round it to the other side.
  int oracle(const mgk_oracle_args* a, cudaStream_t st) {
    namespace o = mgk::oracle;
    const int64_t n = N, b = B, blocks = (n + b - 1) / b;  // by value into the device lambdas
    const int world = this->world();
    o::Scratch scratch(st);
    float* scales = scratch.get<float>(world * blocks);
    if (!scratch.ok()) return mgk::set_error(ctx, "oracle: out of device memory");
    const mgk_input_gen g = a->gens[0];
    MGK_CUDA_TRY(ctx, o::for_each(
                          world * blocks,
                          [=] __device__(int64_t k) {
                            const int s = int(k / blocks);
                            const int64_t begin = (k % blocks) * b, end = begin + b < n ? begin + b : n;
                            double amax = 0;
                            for (int64_t i = begin; i < end; ++i) amax = fmax(amax, fabs(mgk::gen_value(g, s, i)));
                            scales[k] = block_scale(float(amax));  // |x| is a bf16 value: exact in fp32
                          },
                          st));
    auto* expected = static_cast<double*>(a->expected[0]);
    float* scale = a->scale[0];
    MGK_CUDA_TRY(ctx, o::for_each(
                          n,
                          [=] __device__(int64_t i) {
                            double sum = 0, mag = 0, ties = 0;
                            for (int s = 0; s < world; ++s) {
                              const double x = mgk::gen_value(g, s, i), sc = scales[s * blocks + i / b];
                              const float q = fminf(fmaxf(rintf(float(x) / float(sc)), -127.0f), 127.0f);
                              sum += double(q) * sc, mag += fabs(double(q) * sc);
                              const double t = fabs(x / sc), frac = t - floor(t);
                              if (fabs(frac - 0.5) <= 0x1p-20 * t && t < 127) ties += sc;
                            }
                            const double mean = sum / world;
                            expected[i] = mean;
                            scale[i] = float(fabs(mean) + double(world) * 0x1p-24 / o::kBf16U * mag / world +
                                             ties / (world * o::kBf16U));
                          },
                          st));
    return 0;
  }
};

}  // namespace

MGK_REFERENCE(QuantizedGradAllReduce)
