// Flaw: y = own x, not the sum over ranks.
#include "../gpu/candidates/simple_common.cuh"
SIMPLE_SETUP_TEARDOWN

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));
  MGK_CUDA_TRY(ctx, cudaMemcpyAsync(out[0].data, in[0].data, mgk::nbytes(out[0]), cudaMemcpyDeviceToDevice, s));
  return 0;
}
