// Flaw: writes through a wild pointer (an illegal address).
#include "mgk/solution.h"

MGK_EXPORT int mgk_setup(mgk_ctx*) { return 0; }
MGK_EXPORT void mgk_teardown(mgk_ctx*) {}

__global__ void wild(float* p) { p[threadIdx.x] = 1.0f; }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor*, int, const mgk_tensor*, int, cudaStream_t s) {
  wild<<<1, 32, 0, s>>>(reinterpret_cast<float*>(0x10));
  MGK_LAUNCH_CHECK(ctx);
  return 0;
}
