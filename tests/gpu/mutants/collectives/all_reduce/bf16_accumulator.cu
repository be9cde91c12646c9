// Mutant of tests/gpu/candidates/all_reduce.cu. Class: a reduction in lower precision than the statement allows.
// The accumulator is bf16 whatever the dtype (a kernel written for bf16 reused for f32): f32 results carry bf16 rounding.
#include "../../../candidates/simple_common.cuh"
SIMPLE_SETUP_TEARDOWN

// fp32 in, bf16 accumulator: the sum rounded to bf16 after every term.
template <typename T>
__global__ void sum_bf16(void* const* x_peers, int world, int64_t offset, T* y, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    __nv_bfloat16 acc = __float2bfloat16(0.f);
    for (int r = 0; r < world; ++r)
      acc = __float2bfloat16(__bfloat162float(acc) + simple::to_f(static_cast<const T*>(x_peers[r])[offset + i]));
    y[i] = simple::from_f<T>(__bfloat162float(acc));
  }
}
inline cudaError_t sum_lowp(mgk_dtype t, void* const* x, int world, int64_t offset, void* y, int64_t n, cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  int blocks = int(std::min<int64_t>((n + 255) / 256, 132 * 8));
  if (t == MGK_BF16) sum_bf16<__nv_bfloat16><<<blocks, 256, 0, s>>>(x, world, offset, static_cast<__nv_bfloat16*>(y), n);
  else sum_bf16<float><<<blocks, 256, 0, s>>>(x, world, offset, static_cast<float*>(y), n);
  return cudaGetLastError();
}

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));
  MGK_CUDA_TRY(ctx, sum_lowp(out[0].dtype, in[0].peers, ctx->world_size, 0, out[0].data, out[0].numel, s));
  return 0;
}
