#include "fill.h"

#include "mgk/gen.cuh"

namespace mgk::bench {

namespace {

__global__ void fill_kernel(mgk_input_gen g, void* p, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    mgk::store_value(p, g.dtype, i, mgk::gen_value(g, 0, i));
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
