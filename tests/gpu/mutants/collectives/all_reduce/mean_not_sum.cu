// Mutant of tests/gpu/candidates/all_reduce.cu. Class: wrong elementwise function (scale).
// The sum is divided by W: gradient all-reduces average, and a model carries the habit over to a sum.
#include "../../../candidates/simple_common.cuh"
SIMPLE_SETUP_TEARDOWN

// The sum divided by the world size afterwards (a mean).
template <typename T>
__global__ void scale(T* y, int64_t n, float f) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    y[i] = simple::from_f<T>(simple::to_f(y[i]) * f);
}
inline cudaError_t divide(mgk_dtype t, void* y, int64_t n, int world, cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  int blocks = int(std::min<int64_t>((n + 255) / 256, 132 * 8));
  if (t == MGK_BF16) scale<<<blocks, 256, 0, s>>>(static_cast<__nv_bfloat16*>(y), n, 1.f / world);
  else scale<<<blocks, 256, 0, s>>>(static_cast<float*>(y), n, 1.f / world);
  return cudaGetLastError();
}

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));
  MGK_CUDA_TRY(ctx, simple::sum(out[0].dtype, in[0].peers, ctx->world_size, 0, out[0].data, out[0].numel, s));
  MGK_CUDA_TRY(ctx, divide(out[0].dtype, out[0].data, out[0].numel, ctx->world_size, s));
  return 0;
}
