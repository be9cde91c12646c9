// Block-cooperative sums over several sources (any of them local or a peer's memory) into
// one or more destinations (likewise): the core of all-reduce, reduce-scatter and reduce.
// Accumulates in fp32 and rounds once per element.
#pragma once
#include "../mechanism/vec_io.cuh"
#include "vec_math.cuh"

namespace mgk::prim {

// dsts[k][i] = sum over s < nsrc of srcs[s][i], for every i < n and k < ndst, T = bf16 or
// float. The pointer arrays are the caller's: best a __shared__ array filled before a
// __syncthreads (a per-thread array of MGK_MAX_WORLD pointers costs local memory). Full
// speed when every pointer is 16-byte aligned (16-byte vectors, Unroll per thread, the
// loads of two sources issued together); otherwise element by element. A destination may
// alias a source at the same index. All threads of the block call it with the same
// arguments; no synchronisation inside.
template <class T, int Unroll = 4>
MGK_DEV void block_reduce(T* const* dsts, int ndst, const T* const* srcs, int nsrc, int64_t n) {
  using M = vec_math<T>;
  constexpr int L = M::lanes;
  constexpr int kSourcesTogether = 2;  // sources whose loads are issued before the first add
  bool aligned = true;
  for (int k = 0; k < ndst; ++k) aligned = aligned && is_aligned(dsts[k], 16);
  for (int s = 0; s < nsrc; ++s) aligned = aligned && is_aligned(srcs[s], 16);
  const int64_t vectors = aligned ? n / L : 0;
  const int64_t step = blockDim.x;

  int64_t i = threadIdx.x;
  for (; i < vectors; i += Unroll * step) {
    float acc[Unroll][L] = {};
    for (int s0 = 0; s0 < nsrc; s0 += kSourcesTogether) {
      uint4 v[kSourcesTogether][Unroll];
#pragma unroll
      for (int g = 0; g < kSourcesTogether; ++g)
#pragma unroll
        for (int u = 0; u < Unroll; ++u)
          if (s0 + g < nsrc && i + u * step < vectors) v[g][u] = ld16(srcs[s0 + g] + (i + u * step) * L);
#pragma unroll
      for (int g = 0; g < kSourcesTogether; ++g)
#pragma unroll
        for (int u = 0; u < Unroll; ++u)
          if (s0 + g < nsrc && i + u * step < vectors) M::add(acc[u], v[g][u]);
    }
#pragma unroll
    for (int u = 0; u < Unroll; ++u) {
      if (i + u * step >= vectors) break;
      const uint4 out = M::pack(acc[u]);
      for (int k = 0; k < ndst; ++k) st16(dsts[k] + (i + u * step) * L, out);
    }
  }
  // Elements past the last whole vector (or all of them when misaligned).
  for (int64_t e = vectors * L + threadIdx.x; e < n; e += step) {
    float acc = 0.f;
    for (int s = 0; s < nsrc; ++s) acc += M::to_float(load<sizeof(T)>(srcs[s] + e));
    const auto out = M::from_float(acc);
    for (int k = 0; k < ndst; ++k) store<sizeof(T)>(dsts[k] + e, out);
  }
}

// Convenience for one destination.
template <class T, int Unroll = 4>
MGK_DEV void block_reduce(T* dst, const T* const* srcs, int nsrc, int64_t n) {
  T* const dsts[1] = {dst};
  block_reduce<T, Unroll>(dsts, 1, srcs, nsrc, n);
}

}  // namespace mgk::prim
