// What the two clip-grad-norm references share (problems/dp/clip_grad_norm_no_ep and
// clip_grad_norm_ep): on the reference's side their base, which sums squares with CUB; on the
// oracle's, an fp64 sum over every rank's regenerated gradients in kPartials blocks, then one
// sum of those.
// Kept beside the problems, so the model sees it with the reference that includes it.
#pragma once
#include <cub/cub.cuh>

#include "mgk/reference_kit.h"  // and oracle::for_each, oracle::Scratch

namespace gradnorm {

constexpr float kMaxNorm = 1.0f;

struct Square {
  __device__ float operator()(__nv_bfloat16 v) const {
    const float f = __bfloat162float(v);
    return f * f;
  }
};

// The base of both references: the gradients' dims, `sums` (floats) and CUB's temporary
// storage for a sum of squares over M N elements.
struct SquaresReference : mgk::Reference {
  using Reference::Reference;
  const int64_t M = dim("M"), N = dim("N");
  mgk::DeviceBuffer<float> sums;
  mgk::DeviceBuffer<char> temp;
  size_t temp_bytes = 0;

 protected:
  // `count` floats of sums, and the temporary storage.
  int allocate_sums(int count) {
    MGK_CUDA_TRY(ctx, sums.allocate(count));
    const int64_t n = M * N;
    MGK_CUDA_TRY(ctx, cub::DeviceReduce::TransformReduce(nullptr, temp_bytes, static_cast<const __nv_bfloat16*>(nullptr),
                                                         sums.get(), n, cuda::std::plus<float>(), Square(), 0.0f));
    MGK_CUDA_TRY(ctx, temp.allocate(int64_t(std::max<size_t>(temp_bytes, 16))));
    return 0;
  }

  // sums[k] = the fp32 sum of the squares of x's n elements, on st.
  cudaError_t sum_squares(const __nv_bfloat16* x, int64_t n, int k, cudaStream_t st) {
    return cub::DeviceReduce::TransformReduce(temp.get(), temp_bytes, x, sums.get() + k, n, cuda::std::plus<float>(),
                                              Square(), 0.0f, st);
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
