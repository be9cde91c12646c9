// Degenerate, for any problem: every float output 1.0, every integer output 1. It must fail
// everywhere.
#include "mgk/solution.h"

namespace {
__global__ void fill_kernel(void* p, mgk_dtype t, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    switch (t) {
      case MGK_BF16: static_cast<__nv_bfloat16*>(p)[i] = __float2bfloat16(1.0f); break;
      case MGK_F16: static_cast<__half*>(p)[i] = __float2half(1.0f); break;
      case MGK_F32: static_cast<float*>(p)[i] = 1.0f; break;
      case MGK_F64: static_cast<double*>(p)[i] = 1.0; break;
      case MGK_I32: static_cast<int32_t*>(p)[i] = 1; break;
      case MGK_I64: static_cast<int64_t*>(p)[i] = 1; break;
      case MGK_U8: static_cast<uint8_t*>(p)[i] = 1; break;
      case MGK_E4M3: static_cast<uint8_t*>(p)[i] = 0x38; break;  // 1.0: exponent 7 (bias 7)
      case MGK_E5M2: static_cast<uint8_t*>(p)[i] = 0x3C; break;  // 1.0: exponent 15 (bias 15)
    }
  }
}
}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx*) { return 0; }
MGK_EXPORT void mgk_teardown(mgk_ctx*) {}

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor*, int, const mgk_tensor* out, int n_out, cudaStream_t s) {
  for (int o = 0; o < n_out; ++o) {
    if (out[o].numel == 0) continue;
    const int64_t blocks = (out[o].numel + 255) / 256;
    fill_kernel<<<unsigned(blocks < 4096 ? blocks : 4096), 256, 0, s>>>(out[o].data, out[o].dtype, out[o].numel);
    MGK_LAUNCH_CHECK(ctx);
  }
  return 0;
}
