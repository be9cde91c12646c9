#include "fill.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "mgk/gen.cuh"

namespace mgk::bench {

namespace {

__global__ void fill_kernel(mgk_input_gen g, void* p, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const double v = mgk::gen_value(g, 0, i);
    switch (g.dtype) {
      case MGK_BF16: static_cast<__nv_bfloat16*>(p)[i] = __float2bfloat16_rn(float(v)); break;
      case MGK_F16: static_cast<__half*>(p)[i] = __float2half_rn(float(v)); break;
      case MGK_F32: static_cast<float*>(p)[i] = float(v); break;
      case MGK_F64: static_cast<double*>(p)[i] = v; break;
      case MGK_I32: static_cast<int32_t*>(p)[i] = int32_t(v); break;
      case MGK_I64: static_cast<int64_t*>(p)[i] = int64_t(v); break;
      case MGK_U8: static_cast<uint8_t*>(p)[i] = uint8_t(v); break;
    }
  }
}

}  // namespace

cudaError_t fill(const mgk_input_gen& gen, void* data, int64_t numel, cudaStream_t s) {
  if (numel <= 0) return cudaSuccess;
  const int64_t blocks = (numel + 255) / 256;
  fill_kernel<<<unsigned(blocks < 16384 ? blocks : 16384), 256, 0, s>>>(gen, data, numel);
  return cudaGetLastError();
}

cudaError_t flush_l2(void* scratch, size_t bytes, cudaStream_t s) { return cudaMemsetAsync(scratch, 0x5a, bytes, s); }

}  // namespace mgk::bench
