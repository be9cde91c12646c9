// Shared by fft/distributed_rfft2 and fft/distributed_irfft2 (PhysicsNeMo's distributed 2-D
// real FFTs): the slab dims both read, owned cuFFT plans (the real one is
// conv/hyena_forward_cp's), the all-to-all of equal chunks
// both references make, and the oracles' fp64 pieces (roots of unity, a block sum).
//
// Complex values are cufftComplex (float2: re, im interleaved) everywhere, which is how the
// spec stores a complex tensor: fp32 with a trailing dimension of 2.
#pragma once
#include <cufft.h>

#include "mgk/reference_kit.h"

// Return from the enclosing member with the cuFFT status as ctx->error.
#define FFT_CUFFT_TRY(ctx, expr)                                                                     \
  do {                                                                                               \
    cufftResult fft_r_ = (expr);                                                                     \
    if (fft_r_ != CUFFT_SUCCESS)                                                                     \
      return mgk::set_error((ctx), "%s:%d: %s: cuFFT error %d", __FILE__, __LINE__, #expr, int(fft_r_)); \
  } while (0)

namespace fft {

// A cuFFT plan's handle, destroyed with its owner; the plans below differ in how they are made.
class PlanHandle {
 public:
  PlanHandle() = default;
  PlanHandle(const PlanHandle&) = delete;
  PlanHandle& operator=(const PlanHandle&) = delete;
  ~PlanHandle() {
    if (made_) cufftDestroy(h_);
  }

 protected:
  cufftResult create() {
    cufftResult r = cufftCreate(&h_);
    made_ = r == CUFFT_SUCCESS;
    return r;
  }
  cufftHandle h_ = 0;

 private:
  bool made_ = false;
};

// A batched 1-D complex-to-complex plan. Element j of transform t sits at t * dist + j * stride,
// in and out alike (the transforms run in place).
class Plan : PlanHandle {
 public:
  cufftResult make(int64_t n, int64_t stride, int64_t dist, int64_t batch) {
    if (cufftResult r = create(); r != CUFFT_SUCCESS) return r;
    long long len = n, embed = n;
    size_t work = 0;
    return cufftMakePlanMany64(h_, 1, &len, &embed, stride, dist, &embed, stride, dist, CUFFT_C2C, batch, &work);
  }

  // In place on `data`, unnormalised; direction CUFFT_FORWARD (e^{-2 pi i jk/n}) or CUFFT_INVERSE.
  cufftResult exec(float2* data, int direction, cudaStream_t s) const {
    cufftResult r = cufftSetStream(h_, s);
    if (r != CUFFT_SUCCESS) return r;
    return cufftExecC2C(h_, data, data, direction);
  }
};

// A batched 1-D real plan (R2C or C2R), contiguous rows: real rows of n, complex rows of
// n / 2 + 1 (conv/hyena_forward_cp's long convolution).
class RealPlan : PlanHandle {
 public:
  cufftResult make(int64_t n, int64_t batch, cufftType type) {
    if (cufftResult r = create(); r != CUFFT_SUCCESS) return r;
    long long len = n;
    size_t work = 0;
    // Null embeds: the basic layout, rows one after another (the strides are then ignored).
    return cufftMakePlanMany64(h_, 1, &len, nullptr, 1, 0, nullptr, 1, 0, type, batch, &work);
  }
  cufftResult forward(float* in, cufftComplex* out, cudaStream_t s) const {
    cufftResult r = cufftSetStream(h_, s);
    return r != CUFFT_SUCCESS ? r : cufftExecR2C(h_, in, out);
  }
  cufftResult inverse(cufftComplex* in, float* out, cudaStream_t s) const {
    cufftResult r = cufftSetStream(h_, s);
    return r != CUFFT_SUCCESS ? r : cufftExecC2R(h_, in, out);
  }
};

// The dims both problems share, read once: the global field is H x WD (H = W HL rows,
// WD = W WL columns), its half-spectrum NF = floor(WD / 2) + 1 columns wide; rank r holds
// rows [r HL, (r + 1) HL) of the spectrum and columns [r WL, (r + 1) WL) of the field.
struct Slabs : mgk::Reference {
  using Reference::Reference;
  const int64_t H = dim("H"), WD = dim("WD"), HL = dim("HL"), WL = dim("WL"), NF = dim("NF");

  // The spec's derived dims must be what the statements say they are.
  int check_dims() {
    if (H != world() * HL || WD != world() * WL || NF != WD / 2 + 1)
      return mgk::set_error(ctx,
                            "dims H = %lld, WD = %lld, NF = %lld are not W HL, W WL, WD / 2 + 1 (HL %lld, WL %lld)",
                            (long long)H, (long long)WD, (long long)NF, (long long)HL, (long long)WL);
    return 0;
  }

  // An all-to-all of equal chunks in one NCCL group: chunk s of `send` (`chunk` complex values
  // at send + s * chunk) to rank s, chunk s of `recv` from rank s (the own chunk included).
  int all_to_all(const float2* send, float2* recv, int64_t chunk, cudaStream_t st) {
    if (!comm()) return 0;  // bench/compute: the local transforms alone
    MGK_NCCL_TRY(ctx, ncclGroupStart());
    for (int s = 0; s < world(); ++s) {
      MGK_NCCL_TRY(ctx, ncclSend(send + s * chunk, size_t(2 * chunk), ncclFloat32, s, comm(), st));
      MGK_NCCL_TRY(ctx, ncclRecv(recv + s * chunk, size_t(2 * chunk), ncclFloat32, s, comm(), st));
    }
    MGK_NCCL_TRY(ctx, ncclGroupEnd());
    return 0;
  }
};

// Threads for a block that walks one row of `n` elements: whole warps, at most 256.
inline unsigned row_threads(int64_t n) { return unsigned(n >= 256 ? 256 : (n + 31) / 32 * 32); }

// cos and sin of 2 pi m / n in fp64, the product m reduced exactly first (m = j k of a DFT
// matrix's entry: below 2^53, so exact in int64).
__device__ inline void unit_root(int64_t m, int64_t n, double& c, double& s) {
  sincospi(2.0 * double(m % n) / double(n), &s, &c);
}

// *out = sum over i < n of f(i), in fp64, by one block of 1024 threads (launch <<<1, 1024>>>).
template <class F>
__global__ void sum_kernel(int64_t n, F f, double* out) {
  __shared__ double part[1024];
  double acc = 0;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) acc += f(i);
  part[threadIdx.x] = acc;
  __syncthreads();
  for (int w = blockDim.x / 2; w; w /= 2) {
    if (threadIdx.x < w) part[threadIdx.x] += part[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) *out = part[0];
}

}  // namespace fft
