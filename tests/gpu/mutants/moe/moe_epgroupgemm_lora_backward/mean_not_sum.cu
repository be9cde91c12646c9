// Mutant of tests/gpu/candidates/moe/moe_epgroupgemm_lora_backward.cu. Class: wrong elementwise function (scale).
// The gradients are averaged over the ranks instead of summed (the data-parallel habit).
//
// The plain candidate's description:
// Plain: every rank copies its three gradients into its symmetric workspace; after a barrier
// each rank sums every rank's copy (rank order, fp32, one rounding to bf16) into its own
// buffers, which are the outputs (in place). The workspace copy is what makes in place safe:
// peers read the copies, never the buffers being overwritten.
#include "../../../candidates/plain_compute.cuh"

namespace {
__global__ void divide_kernel(__nv_bfloat16* y, int64_t n, float f) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    y[i] = __float2bfloat16(__bfloat162float(y[i]) * f);
}
}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  size_t bytes = 0;
  for (int k = 0; k < ctx->num_inputs; ++k) bytes += mgk::nbytes(ctx->inputs[k]);
  return plain::setup(ctx, {bytes});
}
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { plain::teardown(ctx); }

// out[k] is in[k]'s buffer.
MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int n_in, const mgk_tensor* out, int, cudaStream_t s) {
  plain::State& st = plain::state(ctx);
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // no peer still reads this rank's copies of the last call
  int64_t at = 0;
  for (int k = 0; k < n_in; at += in[k].numel, ++k)
    MGK_CUDA_TRY(ctx, cudaMemcpyAsync(static_cast<__nv_bfloat16*>(st.sym[0].local) + at, in[k].data, mgk::nbytes(in[k]),
                                      cudaMemcpyDeviceToDevice, s));
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every rank's copies are in place
  at = 0;
  for (int k = 0; k < n_in; at += out[k].numel, ++k) {
    MGK_CUDA_TRY(ctx, plain::sum_over_ranks(ctx, st.sym[0].peers, at, out[k].data, out[k].numel, s));
    divide_kernel<<<plain::blocks_for(out[k].numel), 256, 0, s>>>(static_cast<__nv_bfloat16*>(out[k].data), out[k].numel,
                                                                   1.0f / float(ctx->world_size));
    MGK_LAUNCH_CHECK(ctx);
  }
  return 0;
}
