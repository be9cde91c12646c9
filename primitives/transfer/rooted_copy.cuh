// The rooted copy protocol of broadcast, scatter and gather, for one block's share: every
// rank copies its part (dst and src may be the root's memory or its own), none reads or
// writes the root's buffers before the root's call has begun, and the root returns only
// after every rank's copy is done (so the root's x may be rewritten, its y read).
//   root:   signal START to every rank, copy, wait for END from every rank;
//   others: wait for START from the root, copy, signal END to the root.
// `start`, `end`: this block's slots of two flag regions (block_flags::slots(region,
// blockIdx.x)). All threads of the block call it with the same arguments.
#pragma once
#include "../sync/peer_signals.cuh"
#include "block_mover.cuh"

namespace mgk::prim {

template <int Mech, int Unroll>
MGK_DEV void block_rooted_copy(void* dst, const void* src, int64_t bytes, const sym_view<uint64_t>& start,
                               const sym_view<uint64_t>& end, int root, uint64_t epoch, const char* what) {
  const int me = start.rank;
  block_mover<Mech, Unroll> mover;
  mover.init(what, me);
  if (me == root) {
    block_signal(start, epoch);
    mover.copy(dst, src, bytes);
    mover.finish();
    block_wait(end, epoch, what);
  } else {
    block_wait(start, epoch, what, root);
    mover.copy(dst, src, bytes);
    mover.finish();
    block_signal(end, epoch, root);
  }
}

}  // namespace mgk::prim
