// Mutant of tests/gpu/candidates/dp/quantized_grad_allreduce.cu. Class: local instead of global normalisation (the mean over ranks).
// The ranks' reconstructions are summed and not divided by W.
//
// The plain candidate's description:
// Plain: after a barrier, one thread per block and rank finds the block's scale from the
// rank's gradient (peer pointers), then one thread per element adds the ranks'
// reconstructions in fp32 (rank order) and divides by W.
#include "../../../candidates/plain_compute.cuh"

namespace {

// scales[s * blocks + k] = max(max |x_s| over block k, 1e-8) / 127 for the ranks used.
__global__ void scales_kernel(void* const* x, int first, int end, int64_t n, int64_t b, float* scales) {
  const int64_t blocks = (n + b - 1) / b;
  for (int64_t k = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; k < (end - first) * blocks;
       k += int64_t(gridDim.x) * blockDim.x) {
    const int s = first + int(k / blocks);
    const auto* xs = static_cast<const __nv_bfloat16*>(x[s]);
    const int64_t begin = (k % blocks) * b;
    float amax = 0;
    for (int64_t i = begin; i < n && i < begin + b; ++i) amax = fmaxf(amax, fabsf(__bfloat162float(xs[i])));
    scales[s * blocks + k % blocks] = fmaxf(amax, 1e-8f) / 127.0f;
  }
}

__global__ void mean_kernel(void* const* x, int first, int end, int world, int64_t n, int64_t b, const float* scales,
                            __nv_bfloat16* out) {
  const int64_t blocks = (n + b - 1) / b;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    float acc = 0;
    for (int s = first; s < end; ++s) {
      const float sc = scales[s * blocks + i / b];
      const float q = fminf(fmaxf(rintf(__bfloat162float(static_cast<const __nv_bfloat16*>(x[s])[i]) / sc), -127.0f), 127.0f);
      acc += q * sc;
    }
    out[i] = __float2bfloat16(acc);
  }
}

}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  const int64_t n = mgk::dim(ctx, "N"), b = mgk::dim(ctx, "B");
  return plain::setup(ctx, {}, {size_t(ctx->world_size * ((n + b - 1) / b)) * 4});
}
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { plain::teardown(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  const int64_t n = mgk::dim(ctx, "N"), b = mgk::dim(ctx, "B"), blocks = (n + b - 1) / b;
  auto* scales = static_cast<float*>(plain::state(ctx).local[0]);
  const int first = plain::first_source(ctx), end = plain::end_source(ctx);
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every rank's gradient of this call is in place
  scales_kernel<<<plain::blocks_for((end - first) * blocks), 256, 0, s>>>(in[0].peers, first, end, n, b, scales);
  MGK_LAUNCH_CHECK(ctx);
  mean_kernel<<<plain::blocks_for(n), 256, 0, s>>>(in[0].peers, first, end, ctx->world_size, n, b, scales,
                                                   static_cast<__nv_bfloat16*>(out[0].data));
  MGK_LAUNCH_CHECK(ctx);
  return 0;
}
