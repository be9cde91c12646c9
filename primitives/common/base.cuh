// Shared basics of the primitives: includes, inline macros, the device clock, work splits.
// Everything here is usable on host and device unless marked MGK_DEV.
#pragma once
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>

#include "mgk/solution.h"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "mgk primitives need sm_90 or newer: compile with -arch=sm_90a"
#endif

#define MGK_DEV __device__ __forceinline__
#define MGK_HD __host__ __device__ __forceinline__

namespace mgk::prim {

constexpr int kWarpThreads = 32;

// This thread's lane within its warp, and its warp within the block.
MGK_DEV int lane_id() { return int(threadIdx.x) & (kWarpThreads - 1); }
MGK_DEV int warp_id() { return int(threadIdx.x) / kWarpThreads; }

// Nanoseconds from the GPU's global timer (the same clock on every SM of a GPU; not
// synchronised between GPUs). Used to bound spin-waits, not for fine timing.
MGK_DEV uint64_t globaltimer_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Integer a / b rounded up, and a rounded up to a multiple of b (a >= 0, b > 0).
MGK_HD constexpr int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
MGK_HD constexpr int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

// A half-open range [begin, end) of some unit (elements, bytes, 16-byte vectors).
struct span {
  int64_t begin, end;
  MGK_HD int64_t size() const { return end - begin; }
};

// Part `i` of `n` units split into `parts` contiguous parts whose sizes differ by at most one.
// Every rank computes the same split for the same arguments, which is what lets block b of
// one GPU pair up with block b of another.
MGK_HD span split_even(int64_t n, int64_t parts, int64_t i) {
  const int64_t q = n / parts, r = n % parts;
  const int64_t begin = i * q + (i < r ? i : r);
  return span{begin, begin + q + (i < r ? 1 : 0)};
}

// Like split_even, but every boundary except the final end is a multiple of `align` units
// (e.g. 16 bytes / element size, so each part starts 16-byte aligned when the whole does).
// The last part takes the remainder that is not a whole multiple of `align`.
MGK_HD span split_aligned(int64_t n, int64_t parts, int64_t i, int64_t align) {
  span s = split_even(n / align, parts, i);
  s.begin *= align;
  s.end *= align;
  if (i == parts - 1) s.end = n;
  return s;
}

// True when p is a multiple of `bytes` (a power of two).
MGK_HD bool is_aligned(const void* p, uintptr_t bytes) {
  return (reinterpret_cast<uintptr_t>(p) & (bytes - 1)) == 0;
}

}  // namespace mgk::prim
