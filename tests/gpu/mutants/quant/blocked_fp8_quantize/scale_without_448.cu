// Mutant of tests/gpu/candidates/quant/blocked_fp8_quantize.cu. Class: wrong elementwise function (scale).
// s = amax instead of amax / 448: the values scaled into [-1, 1] instead of e4m3's range.
//
// The plain candidate's description:
// Plain: after a barrier, one thread per 128-element block of every rank reads the owning
// rank's x (peer pointers), finds the block's max |x|, and writes s = amax / 448 and
// e4m3(x / s) (fp32 IEEE division, round to nearest even) into its rank's rows of y and s.
#include <cuda_fp8.h>

#include "../../../candidates/plain_compute.cuh"

namespace {
__global__ void quantize_all_kernel(void* const* x_peers, uint8_t* y, float* s, int64_t blocks_per_rank, int first,
                                    int end) {
  const int64_t total = int64_t(end - first) * blocks_per_rank;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    const int r = first + int(i / blocks_per_rank);
    const int64_t b = i % blocks_per_rank;
    const auto* x = static_cast<const __nv_bfloat16*>(x_peers[r]) + b * 128;
    float amax = 0;
    for (int k = 0; k < 128; ++k) amax = fmaxf(amax, fabsf(__bfloat162float(x[k])));
    const float scale = amax;  // IEEE division: nvcc's default (-prec-div=true)
    const float safe = scale == 0.0f ? 1.0f : scale;
    const int64_t at = int64_t(r) * blocks_per_rank + b;
    for (int k = 0; k < 128; ++k)
      y[at * 128 + k] = uint8_t(__nv_cvt_float_to_fp8(__bfloat162float(x[k]) / safe, __NV_SATFINITE, __NV_E4M3));
    s[at] = scale;
  }
}
}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) { return plain::setup(ctx, {}); }
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { plain::teardown(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  const int64_t blocks_per_rank = mgk::dim(ctx, "M") * mgk::dim(ctx, "NB");
  // Without communication the other ranks' rows stay zero.
  MGK_CUDA_TRY(ctx, cudaMemsetAsync(out[0].data, 0, mgk::nbytes(out[0]), s));
  MGK_CUDA_TRY(ctx, cudaMemsetAsync(out[1].data, 0, mgk::nbytes(out[1]), s));
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every rank's x of this call is in place
  quantize_all_kernel<<<plain::blocks_for(ctx->world_size * blocks_per_rank), 256, 0, s>>>(
      in[0].peers, static_cast<uint8_t*>(out[0].data), static_cast<float*>(out[1].data), blocks_per_rank,
      plain::first_source(ctx), plain::end_source(ctx));
  MGK_LAUNCH_CHECK(ctx);
  return 0;
}
