// Mutant of tests/gpu/candidates/tp/gemv_decode.cu. Class: off by one in a rank offset.
// Block r is read from peer r at this rank's column offset instead of r's.
//
// The plain candidate's description:
// Plain: after a barrier, logits[:, r block] = x_r weight_r^T on cuBLAS straight into this
// rank's logits, plus the bias (bf16); after a second barrier every rank copies the other
// blocks from the peers' logits.
#include "../../../candidates/plain_compute.cuh"

namespace {
// d[t * ld + v] = bf16(d[t * ld + v] + bias[v]) for t < T, v < VL.
__global__ void add_bias_kernel(__nv_bfloat16* d, int64_t ld, const __nv_bfloat16* bias, int64_t t, int64_t vl) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < t * vl; i += int64_t(gridDim.x) * blockDim.x)
    d[(i / vl) * ld + i % vl] = __float2bfloat16(__bfloat162float(d[(i / vl) * ld + i % vl]) + __bfloat162float(bias[i % vl]));
}
}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) { return plain::setup(ctx, {}); }
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { plain::teardown(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  const int64_t T = mgk::dim(ctx, "T"), H = mgk::dim(ctx, "H"), VL = mgk::dim(ctx, "VL"), V = mgk::dim(ctx, "V");
  auto* logits = static_cast<__nv_bfloat16*>(out[0].data);
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // no peer still reads this rank's block of the last call
  MGK_CUBLAS_TRY(ctx, plain::gemm(ctx, s, false, true, T, VL, H, in[0].data, H, in[1].data, H, logits + ctx->rank * VL, V));
  add_bias_kernel<<<plain::blocks_for(T * VL), 256, 0, s>>>(logits + ctx->rank * VL, V,
                                                            static_cast<const __nv_bfloat16*>(in[2].data), T, VL);
  MGK_LAUNCH_CHECK(ctx);
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every block is written
  for (int r = 0; r < ctx->world_size; ++r)
    if (r != ctx->rank)
      MGK_CUDA_TRY(ctx, plain::copy_from(ctx, r, static_cast<const __nv_bfloat16*>(out[0].host_peers[r]) + ctx->rank * VL, V,
                                         logits + r * VL, V, T, VL, s));
  return 0;
}
