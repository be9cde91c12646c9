// Block-cooperative copies with register-level transfers: every thread of the block moves
// Unroll vectors per step, all loads issued before the stores, so each thread keeps Unroll
// requests in flight (what hides NVLink latency). Source and destination may each be local
// or a peer's memory: a remote destination is a "push" (remote stores), a remote source a
// "pull" (remote loads).
#pragma once
#include "vec_io.cuh"

namespace mgk::prim {

// Copies n units of `Bytes` bytes each (dst, src aligned to Bytes). All threads of the block call it with the
// same arguments; no synchronisation inside (add block_signal / __syncthreads after it).
template <int Bytes, int Unroll>
MGK_DEV void block_copy_units(void* dst, const void* src, int64_t n) {
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
  const int64_t step = blockDim.x;
  int64_t i = threadIdx.x;
  for (; i + (Unroll - 1) * step < n; i += Unroll * step) {
    raw_t<Bytes> v[Unroll];
#pragma unroll
    for (int u = 0; u < Unroll; ++u) v[u] = load<Bytes>(s + (i + u * step) * Bytes);
#pragma unroll
    for (int u = 0; u < Unroll; ++u) store<Bytes>(d + (i + u * step) * Bytes, v[u]);
  }
  for (; i < n; i += step) store<Bytes>(d + i * Bytes, load<Bytes>(s + i * Bytes));
}

// Copies `bytes` bytes with the widest accesses the alignment of dst and src allows (16 B
// when both are 16-byte aligned) and a byte-wise tail. Any size and alignment is correct;
// only 16-byte aligned copies run at full speed. Same calling rules as block_copy_units.
template <int Unroll = 4>
MGK_DEV void block_copy(void* dst, const void* src, int64_t bytes) {
  const uintptr_t both = reinterpret_cast<uintptr_t>(dst) | reinterpret_cast<uintptr_t>(src);
  int64_t done;
  if ((both & 15) == 0) {
    block_copy_units<16, Unroll>(dst, src, bytes / 16);
    done = bytes / 16 * 16;
  } else if ((both & 7) == 0) {
    block_copy_units<8, Unroll>(dst, src, bytes / 8);
    done = bytes / 8 * 8;
  } else if ((both & 3) == 0) {
    block_copy_units<4, Unroll>(dst, src, bytes / 4);
    done = bytes / 4 * 4;
  } else if ((both & 1) == 0) {
    block_copy_units<2, Unroll>(dst, src, bytes / 2);
    done = bytes / 2 * 2;
  } else {
    done = 0;
  }
  if (done < bytes)
    block_copy_units<1, 1>(static_cast<char*>(dst) + done, static_cast<const char*>(src) + done, bytes - done);
}

}  // namespace mgk::prim
