// Building blocks for references' oracles (mgk_oracle): expected outputs computed in double
// from regenerated inputs (gen.cuh), so no communication and no trust in the kernel under test.
// Compiled with --extended-lambda: maps are `[=] __device__ (int64_t i) { ... }`.
#pragma once
#include <cuda_runtime.h>

#include "mgk/abi.h"
#include "mgk/gen.cuh"

namespace mgk::oracle {

// Where output element i comes from: input tensor element `index` on rank `rank`.
struct Source {
  int rank;
  int64_t index;
};

template <class Map>
__global__ void copy_kernel(mgk_input_gen g, Map map, double* expected, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    Source s = map(i);
    expected[i] = mgk::gen_value(g, s.rank, s.index);
  }
}

// expected[i] = sum over ranks r of input(r, index_of(i)); scale[i] = sum of |terms|.
template <class Map>
__global__ void sum_kernel(mgk_input_gen g, int world, Map index_of, double* expected, float* scale, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    int64_t idx = index_of(i);
    double sum = 0, mag = 0;
    for (int r = 0; r < world; ++r) {
      double v = mgk::gen_value(g, r, idx);
      sum += v;
      mag += fabs(v);
    }
    expected[i] = sum;
    if (scale) scale[i] = float(mag);
  }
}

inline int grid_for(int64_t n) {
  int64_t b = (n + 255) / 256;
  return int(b < 1 ? 1 : (b > 8192 ? 8192 : b));
}

template <class Map>
cudaError_t copy(const mgk_input_gen& g, Map map, void* expected, int64_t n, cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  copy_kernel<<<grid_for(n), 256, 0, s>>>(g, map, static_cast<double*>(expected), n);
  return cudaGetLastError();
}

template <class Map>
cudaError_t sum(const mgk_input_gen& g, int world, Map index_of, void* expected, float* scale, int64_t n,
                cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  sum_kernel<<<grid_for(n), 256, 0, s>>>(g, world, index_of, static_cast<double*>(expected), scale, n);
  return cudaGetLastError();
}

}  // namespace mgk::oracle
