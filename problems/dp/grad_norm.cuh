// What the two clip-grad-norm references share (problems/dp/clip_grad_norm_no_ep and
// clip_grad_norm_ep): the squares CUB sums on the reference's side; on the oracle's, an fp64
// sum over every rank's regenerated gradients in kPartials blocks, then one sum of those.
// Kept beside the problems, so the model sees it with the reference that includes it.
#pragma once
#include <cub/cub.cuh>

#include "mgk/oracle_gemm.cuh"  // oracle::for_each, oracle::Scratch
#include "mgk/reference.h"

namespace gradnorm {

constexpr float kMaxNorm = 1.0f;

struct Square {
  __device__ float operator()(__nv_bfloat16 v) const {
    const float f = __bfloat162float(v);
    return f * f;
  }
};

// ---- the oracle's side

constexpr int kThreads = 256, kPartials = 1024;

// partial[blockIdx.x] = the sum of `acc` over the block's kThreads threads.
__device__ inline void store_block_sum(double acc, double* partial) {
  __shared__ double part[kThreads];
  part[threadIdx.x] = acc;
  __syncthreads();
  for (int w = kThreads / 2; w; w /= 2) {
    if (threadIdx.x < w) part[threadIdx.x] += part[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[blockIdx.x] = part[0];
}

// *total = the sum of the kPartials partials (the squared norm); the norm itself into the
// problem's scalar output and its scale.
__global__ void finish_norm_kernel(const double* partial, double* total, double* norm_out, float* norm_scale) {
  double acc = 0;
  for (int b = 0; b < kPartials; ++b) acc += partial[b];
  *total = acc;
  *norm_out = sqrt(acc);
  *norm_scale = float(sqrt(acc));
}

// What every clipped gradient is multiplied by, from the squared norm.
__device__ inline double clip_coef(double total) {
  const double norm = sqrt(total);
  return norm > double(kMaxNorm) ? double(kMaxNorm) / norm : 1.0;
}

}  // namespace gradnorm
