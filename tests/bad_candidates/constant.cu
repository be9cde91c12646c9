// Flaw: writes the constant W * 1.0 (what ParallelKernelBench's constant inputs would sum to
// on a rank+1-free variant): right for constant inputs, wrong for random ones.
#include "../gpu/candidates/simple_common.cuh"
SIMPLE_SETUP_TEARDOWN

__global__ void fill(__nv_bfloat16* y, int64_t n, float v) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    y[i] = __float2bfloat16(v);
}

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor*, int, const mgk_tensor* out, int, cudaStream_t s) {
  if (out[0].dtype != MGK_BF16) return mgk::set_error(ctx, "bf16 only");
  fill<<<264, 256, 0, s>>>(static_cast<__nv_bfloat16*>(out[0].data), out[0].numel, float(ctx->world_size));
  MGK_LAUNCH_CHECK(ctx);
  return 0;
}
