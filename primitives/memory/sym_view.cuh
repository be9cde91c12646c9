// A device-side view of a symmetric buffer: the same allocation exists on every rank, and
// each GPU can address every rank's copy directly (NVLink peer access through UVA).
#pragma once
#include "../common/base.cuh"

namespace mgk::prim {

// Small POD, passed to kernels by value. Made on the host from an mgk_sym_buffer or a
// symmetric mgk_tensor (host/views.cuh); `at` and `as` make views into the same buffers.
//
// peer(r) is rank r's copy as mapped on THIS GPU: loads/stores through it travel over
// NVLink when r != rank. The address of element i is base_r + offset + i * sizeof(T) on
// every rank, so "my element i" and "rank r's element i" are the same position.
template <class T>
struct sym_view {
  void* const* peer_table;  // DEVICE array [world] of every rank's base pointer (from the ABI)
  T* local;                 // this rank's element 0: base_rank + offset_bytes
  size_t offset_bytes;      // offset of element 0 from each rank's base
  int rank, world;

  // Rank r's element 0. Reads the peer table (read-only, cached); call outside hot loops.
  MGK_DEV T* peer(int r) const {
    if (r == rank) return local;
    const auto base = __ldg(reinterpret_cast<const unsigned long long*>(peer_table) + r);
    return reinterpret_cast<T*>(static_cast<uintptr_t>(base) + offset_bytes);
  }

  // The view that starts `elems` elements further on every rank.
  MGK_HD sym_view<T> at(int64_t elems) const {
    sym_view<T> v = *this;
    v.offset_bytes += size_t(elems) * sizeof(T);
    v.local = local + elems;
    return v;
  }

  // The same bytes seen as another element type (offset unchanged).
  template <class U>
  MGK_HD sym_view<U> as() const {
    return sym_view<U>{peer_table, reinterpret_cast<U*>(local), offset_bytes, rank, world};
  }
};

}  // namespace mgk::prim
