// Reference, as ParallelKernelBench's: dequantise every slice in fp32 (x = y * s, one
// thread per 4 elements), then an NCCL all-to-all of the fp32 slices (grouped send/recv).
#include <cuda_fp8.h>

#include "mgk/fp8.cuh"
#include "mgk/reference_kit.h"

namespace {

// x[i] = y[i] * s[i / 128]; blocks are 128 consecutive elements of the flattened tensor.
__global__ void dequantize_kernel(const uint8_t* y, const __nv_bfloat16* s, float* x, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const __half h = __half(__nv_cvt_fp8_to_halfraw(__nv_fp8_storage_t(y[i]), __NV_E4M3));
    x[i] = __half2float(h) * __bfloat162float(s[i / 128]);
  }
}

struct BlockedFp8Dequantize : mgk::Reference {
  using Reference::Reference;
  const int64_t M = dim("M"), N = dim("N"), NBLK = dim("NBLK");
  const int64_t slice = M * N;
  mgk::DeviceBuffer<float> local;  // [W, M, N] this rank's dequantised slices, before the exchange

  int setup() {
    MGK_CUDA_TRY(ctx, local.allocate(world() * slice));
    return 0;
  }

  int run(const mgk_tensor* in, const mgk_tensor* out, cudaStream_t st) {
    const int64_t n = world() * slice;
    const int grid = int(std::min<int64_t>((n + 255) / 256, int64_t(ctx->num_sms) * 16));
    dequantize_kernel<<<grid, 256, 0, st>>>(static_cast<const uint8_t*>(in[0].data),
                                            static_cast<const __nv_bfloat16*>(in[1].data), local, n);
    MGK_LAUNCH_CHECK(ctx);
    auto* x = static_cast<float*>(out[0].data);
    MGK_NCCL_STEP(ctx, ncclGroupStart());
    for (int p = 0; p < world(); ++p) {
      MGK_NCCL_STEP(ctx, ncclSend(local + p * slice, size_t(slice), ncclFloat32, p, comm(), st));
      MGK_NCCL_STEP(ctx, ncclRecv(x + p * slice, size_t(slice), ncclFloat32, p, comm(), st));
    }
    MGK_NCCL_STEP(ctx, ncclGroupEnd());
    return 0;
  }

  // Exact: x[q][i] on rank R is rank q's y[R][i] times its s[R][i / 128]; the product of an
  // e4m3 value (4 significant bits) and a bf16 value (8) has at most 12 significant bits and
  // a normal exponent, so fp32 holds it exactly and any correct order of the work gives it.
  int oracle(const mgk_oracle_args* a, cudaStream_t st) {
    const int64_t slice = this->slice, nblk = NBLK;  // by value into the device lambda
    const mgk_input_gen gy = a->gens[0], gs = a->gens[1];
    const int rank = this->rank();
    auto* expected = static_cast<double*>(a->expected[0]);
    MGK_CUDA_TRY(ctx, mgk::oracle::for_each(
                          world() * slice,
                          [=] __device__(int64_t i) {
                            const int q = int(i / slice);
                            const int64_t j = i % slice;
                            expected[i] = mgk::gen_value(gy, q, rank * slice + j) * mgk::gen_value(gs, q, rank * nblk + j / 128);
                          },
                          st));
    return 0;
  }
};

}  // namespace

MGK_REFERENCE(BlockedFp8Dequantize)
