// Flaw: computes the right sum, then (after every rank has read it) doubles its own input.
#include "../gpu/candidates/simple_common.cuh"
SIMPLE_SETUP_TEARDOWN

__global__ void scale_in_place(__nv_bfloat16* x, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    x[i] = __float2bfloat16(2.0f * __bfloat162float(x[i]));
}

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  if (out[0].dtype != MGK_BF16) return mgk::set_error(ctx, "bf16 only");
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));
  MGK_CUDA_TRY(ctx, simple::sum(out[0].dtype, in[0].peers, ctx->world_size, 0, out[0].data, out[0].numel, s));
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // everyone has read x
  scale_in_place<<<264, 256, 0, s>>>(static_cast<__nv_bfloat16*>(in[0].data), in[0].numel);
  MGK_LAUNCH_CHECK(ctx);
  return 0;
}
