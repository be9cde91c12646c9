// Mutant of tests/gpu/candidates/reduce_scatter.cu. Class: off by one in an index (the rank for the loop variable).
// The peer index written as the rank (x_peers[rank] for every r): W times this rank's own input. (A bf16 accumulator is no mutant at the default W = 2 in bf16: two terms round once either way.)
#include "../../../candidates/simple_common.cuh"
SIMPLE_SETUP_TEARDOWN

// simple::sum_pull with the bug: the loop reads x_peers[self] (this rank) for every r.
template <typename T>
__global__ void sum_self(void* const* x_peers, int world, int self, int64_t offset, T* y, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    float acc = 0;
    for (int r = 0; r < world; ++r) acc += simple::to_f(static_cast<const T*>(x_peers[self])[offset + i]);
    y[i] = simple::from_f<T>(acc);
  }
}
inline cudaError_t sum_wrong(mgk_dtype t, void* const* x, int world, int self, int64_t offset, void* y, int64_t n,
                             cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  int blocks = int(std::min<int64_t>((n + 255) / 256, 132 * 8));
  if (t == MGK_BF16) sum_self<__nv_bfloat16><<<blocks, 256, 0, s>>>(x, world, self, offset, static_cast<__nv_bfloat16*>(y), n);
  else sum_self<float><<<blocks, 256, 0, s>>>(x, world, self, offset, static_cast<float*>(y), n);
  return cudaGetLastError();
}

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  int64_t c = out[0].numel;
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));
  MGK_CUDA_TRY(ctx, sum_wrong(out[0].dtype, in[0].peers, ctx->world_size, ctx->rank, int64_t(ctx->rank) * c, out[0].data, c, s));
  return 0;
}
