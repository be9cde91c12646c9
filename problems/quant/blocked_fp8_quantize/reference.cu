// Reference: one warp per block of 128 elements computes s = amax / 448 and e4m3(x / s) in
// fp32 (IEEE division, round to nearest even, saturating), as ParallelKernelBench's Triton
// kernel does, straight into this rank's slot of y and s; then two in-place NCCL
// all-gathers (the fp8 bytes, the fp32 scales).
#include <cuda_fp8.h>

#include "mgk/fp8.cuh"
#include "mgk/reference_kit.h"

namespace {

constexpr int kBlock = 128;      // elements per scale
constexpr int kWarpsPerCta = 8;  // one 128-element block per warp

// Warp w of CTA b quantises block b * kWarpsPerCta + w: lane l holds elements 4l..4l+3.
__global__ void quantize_kernel(const __nv_bfloat16* x, uint8_t* y, float* s, int64_t blocks) {
  const int64_t blk = int64_t(blockIdx.x) * kWarpsPerCta + threadIdx.x / 32;
  if (blk >= blocks) return;
  const int lane = threadIdx.x % 32;
  // 4 bf16 = 8 bytes a lane; a block starts at 256-byte multiples, so the load is aligned.
  const uint2 raw = reinterpret_cast<const uint2*>(x + blk * kBlock)[lane];
  const auto* h = reinterpret_cast<const __nv_bfloat162*>(&raw);
  const float2 a = __bfloat1622float2(h[0]), b = __bfloat1622float2(h[1]);
  const float v[4] = {a.x, a.y, b.x, b.y};
  float amax = fmaxf(fmaxf(fabsf(v[0]), fabsf(v[1])), fmaxf(fabsf(v[2]), fabsf(v[3])));
  for (int o = 16; o; o /= 2) amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, o));
  const float scale = __fdiv_rn(amax, 448.0f);
  const float safe = scale == 0.0f ? 1.0f : scale;
  uint32_t packed = 0;
  for (int k = 0; k < 4; ++k)
    packed |= uint32_t(__nv_cvt_float_to_fp8(__fdiv_rn(v[k], safe), __NV_SATFINITE, __NV_E4M3)) << (8 * k);
  reinterpret_cast<uint32_t*>(y + blk * kBlock)[lane] = packed;
  if (lane == 0) s[blk] = scale;
}

struct BlockedFp8Quantize : mgk::Reference {
  using Reference::Reference;
  const int64_t M = dim("M"), N = dim("N"), NB = dim("NB");

  int run(const mgk_tensor* in, const mgk_tensor* out, cudaStream_t st) {
    const int64_t blocks = M * NB;
    auto* y = static_cast<uint8_t*>(out[0].data);
    auto* s = static_cast<float*>(out[1].data);
    uint8_t* my_y = y + rank() * M * N;
    float* my_s = s + rank() * blocks;
    const int64_t ctas = (blocks + kWarpsPerCta - 1) / kWarpsPerCta;
    if (ctas > 0) quantize_kernel<<<unsigned(ctas), 32 * kWarpsPerCta, 0, st>>>(
        static_cast<const __nv_bfloat16*>(in[0].data), my_y, my_s, blocks);
    MGK_LAUNCH_CHECK(ctx);
    // In place: each rank's send buffer is its own slot of the gathered tensor.
    MGK_NCCL_STEP(ctx, ncclGroupStart());
    MGK_NCCL_STEP(ctx, ncclAllGather(my_y, y, size_t(M * N), ncclUint8, comm(), st));
    MGK_NCCL_STEP(ctx, ncclAllGather(my_s, s, size_t(blocks), ncclFloat32, comm(), st));
    MGK_NCCL_STEP(ctx, ncclGroupEnd());
    return 0;
  }

  // Exact, in fp64 from the regenerated inputs: s = fp32(amax / 448) (an fp64 quotient rounded
  // once to fp32 is the correctly rounded fp32 quotient: 53 >= 2 * 24 + 2), q = fp32(x / s)
  // likewise, y = e4m3(q) rounded to nearest even (mgk/fp8.cuh, checked against the format's
  // definition in tests/sandbox/fp8_test.cc). Both outputs are compared bit for bit.
  int oracle(const mgk_oracle_args* a, cudaStream_t st) {
    const int64_t M = this->M, NB = this->NB;  // by value into the device lambda
    const mgk_input_gen g = a->gens[0];
    auto* ey = static_cast<double*>(a->expected[0]);
    auto* es = static_cast<double*>(a->expected[1]);
    const int64_t per_rank = M * N;
    // One thread per 128-element block of every rank: it writes the block's scale and values.
    MGK_CUDA_TRY(ctx, mgk::oracle::for_each(
                          world() * M * NB,
                          [=] __device__(int64_t b) {
                            const int r = int(b / (M * NB));
                            const int64_t first = (b % (M * NB)) * 128;
                            double amax = 0;
                            for (int k = 0; k < 128; ++k) amax = fmax(amax, fabs(mgk::gen_value(g, r, first + k)));
                            const double scale = double(float(amax / 448.0));
                            es[b] = scale;
                            const double safe = scale == 0 ? 1.0 : scale;
                            for (int k = 0; k < 128; ++k) {
                              const double q = double(float(mgk::gen_value(g, r, first + k) / safe));
                              ey[r * per_rank + first + k] = mgk::fp8_to_double(MGK_E4M3, mgk::fp8_from_double(MGK_E4M3, q));
                            }
                          },
                          st));
    return 0;
  }
};

}  // namespace

MGK_REFERENCE(BlockedFp8Quantize)
