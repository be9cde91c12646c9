// Shared by the hand-written test candidates: a grid-wide cross-GPU barrier on epoch flags
// (no reset between calls) and a vector type per element size. Deliberately plain: these
// are the "obviously correct" kernels the evaluator must accept; the bad ones beside them
// are each wrong in exactly one way.
#pragma once
#include "mgk/solution.h"

namespace simple {

struct State {
  mgk_sym_buffer flags;  // [world] uint64 per rank: the last epoch each peer reached
  unsigned long long epoch = 0;
};

inline int setup(mgk_ctx* ctx) {
  auto* s = new State;
  if (ctx->sym_alloc(ctx, sizeof(unsigned long long) * ctx->world_size, &s->flags)) return 1;
  ctx->state = s;
  return 0;
}

inline void teardown(mgk_ctx* ctx) { delete static_cast<State*>(ctx->state); }

// Block 0 signals every peer and waits for all of them; the rest of the grid waits on a
// grid barrier... kept simple: the barrier is its own tiny kernel launch.
__global__ void barrier_kernel(void* const* flag_peers, int rank, int world, unsigned long long epoch) {
  int t = threadIdx.x;
  if (t < world) {
    auto* slot = static_cast<unsigned long long*>(flag_peers[t]) + rank;
    asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(slot), "l"(epoch) : "memory");
    auto* mine = static_cast<unsigned long long*>(flag_peers[rank]) + t;
    unsigned long long v;
    do asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(mine) : "memory");
    while (v < epoch);
  }
}

inline cudaError_t barrier(mgk_ctx* ctx, cudaStream_t s) {
  auto* st = static_cast<State*>(ctx->state);
  barrier_kernel<<<1, 128, 0, s>>>(st->flags.peers, ctx->rank, ctx->world_size, ++st->epoch);
  return cudaGetLastError();
}

template <typename T>
__device__ inline float to_f(T v) { return float(v); }
template <>
__device__ inline float to_f(__nv_bfloat16 v) { return __bfloat162float(v); }
template <typename T>
__device__ inline T from_f(float v) { return T(v); }
template <>
__device__ inline __nv_bfloat16 from_f(float v) { return __float2bfloat16(v); }

// y[i] = sum over ranks of x_r[offset + i], for i < n (pull, fp32 accumulation).
template <typename T>
__global__ void sum_pull(void* const* x_peers, int world, int64_t offset, T* y, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    float acc = 0;
    for (int r = 0; r < world; ++r) acc += to_f(static_cast<const T*>(x_peers[r])[offset + i]);
    y[i] = from_f<T>(acc);
  }
}

template <typename T>
inline cudaError_t launch_sum(void* const* x_peers, int world, int64_t offset, void* y, int64_t n, cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  int blocks = int(std::min<int64_t>((n + 255) / 256, 132 * 8));
  sum_pull<T><<<blocks, 256, 0, s>>>(x_peers, world, offset, static_cast<T*>(y), n);
  return cudaGetLastError();
}

inline cudaError_t sum(mgk_dtype t, void* const* x_peers, int world, int64_t offset, void* y, int64_t n, cudaStream_t s) {
  return t == MGK_BF16 ? launch_sum<__nv_bfloat16>(x_peers, world, offset, y, n, s)
                       : launch_sum<float>(x_peers, world, offset, y, n, s);
}

// Byte copy from any (peer) pointer, for data movement.
__global__ void copy_bytes(const unsigned char* src, unsigned char* dst, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    dst[i] = src[i];
}

inline cudaError_t copy(const void* src, void* dst, int64_t bytes, cudaStream_t s) {
  if (bytes == 0) return cudaSuccess;
  int blocks = int(std::min<int64_t>((bytes + 255) / 256, 132 * 8));
  copy_bytes<<<blocks, 256, 0, s>>>(static_cast<const unsigned char*>(src), static_cast<unsigned char*>(dst), bytes);
  return cudaGetLastError();
}

}  // namespace simple

#define SIMPLE_SETUP_TEARDOWN                                           \
  MGK_EXPORT int mgk_setup(mgk_ctx* ctx) { return simple::setup(ctx); } \
  MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { simple::teardown(ctx); }
