// Mutant of tests/gpu/candidates/quant/blocked_fp8_dequantize.cu. Class: wrong elementwise function (the scale inverted).
// The fp8 value is divided by its block's scale, as if s were the quantiser's multiplier (448 / amax) rather than amax / 448.
//
// The plain candidate's description:
// Plain: after a barrier, every rank pulls its slice from every rank (peer pointers) and
// dequantises it where it lands: x[q][i] = y_q[R][i] * s_q[R][i / 128] in fp32.
#include <cuda_fp8.h>

#include "../../../candidates/plain_compute.cuh"

namespace {
__global__ void pull_dequantize_kernel(void* const* y_peers, void* const* s_peers, int rank, int first, int end,
                                       int64_t slice, int64_t nblk, float* x) {
  const int64_t total = int64_t(end - first) * slice;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    const int q = first + int(i / slice);
    const int64_t j = i % slice;
    const uint8_t byte = static_cast<const uint8_t*>(y_peers[q])[rank * slice + j];
    const float v = __half2float(__half(__nv_cvt_fp8_to_halfraw(__nv_fp8_storage_t(byte), __NV_E4M3)));
    x[q * slice + j] = v / __bfloat162float(static_cast<const __nv_bfloat16*>(s_peers[q])[rank * nblk + j / 128]);
  }
}
}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) { return plain::setup(ctx, {}); }
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { plain::teardown(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  const int64_t slice = mgk::dim(ctx, "M") * mgk::dim(ctx, "N"), nblk = mgk::dim(ctx, "NBLK");
  MGK_CUDA_TRY(ctx, cudaMemsetAsync(out[0].data, 0, mgk::nbytes(out[0]), s));  // slices not pulled stay zero
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every rank's y and s of this call are in place
  const int first = plain::first_source(ctx), end = plain::end_source(ctx);
  pull_dequantize_kernel<<<plain::blocks_for((end - first) * slice), 256, 0, s>>>(
      in[0].peers, in[1].peers, ctx->rank, first, end, slice, nblk, static_cast<float*>(out[0].data));
  MGK_LAUNCH_CHECK(ctx);
  return 0;
}
