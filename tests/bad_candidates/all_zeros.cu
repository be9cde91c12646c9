// Flaw: writes zeros (passes a loose absolute tolerance on small sums).
#include "../gpu/candidates/simple_common.cuh"
SIMPLE_SETUP_TEARDOWN

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor*, int, const mgk_tensor* out, int, cudaStream_t s) {
  MGK_CUDA_TRY(ctx, cudaMemsetAsync(out[0].data, 0, mgk::nbytes(out[0]), s));
  return 0;
}
