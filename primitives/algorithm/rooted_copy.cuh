// The rooted copy of broadcast, scatter and gather, for one block's share: every
// rank copies its part (dst and src may be the root's memory or its own), none reads or
// writes the root's buffers before the root's call has begun, and the root returns only
// after every rank's copy is done (so the root's x may be rewritten, its y read).
//   root:   signal START to every rank, copy, wait for END from every rank;
//   others: wait for START from the root, copy, signal END to the root.
// `start`, `end`: this block's slots of two flag regions (block_flags::slots(region,
// blockIdx.x)). All threads of the block call it with the same arguments.
#pragma once
#include "../sync/peer_signals.cuh"
#include "../mechanism/block_mover.cuh"

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

// What each rank copies, with root 0's buffers on one side:
//   broadcast: all of the root's x into my y (pull);
//   scatter:   the my-th piece of the root's x into my y (pull);
//   gather:    my x into the my-th piece of the root's y (push).
enum class rooted_layout { broadcast, scatter, gather };

namespace detail {
template <rooted_layout L>
MGK_DEV const char* rooted_copy_what() {
  if constexpr (L == rooted_layout::broadcast)
    return "broadcast (ranks wait for the root to start, the root for every reader of x)";
  if constexpr (L == rooted_layout::scatter)
    return "scatter (ranks wait for the root to start, the root for every reader of x)";
  if constexpr (L == rooted_layout::gather)
    return "gather (ranks wait for the root to start, the root for every rank's chunk)";
}
}  // namespace detail

// The whole rooted copy for every block of a kernel's grid: `bytes` is what each rank
// receives (broadcast, scatter) or sends (gather); x, y symmetric; `start`, `end`: flag
// regions of `flags` of their own.
template <rooted_layout L, int Mech, int Unroll, int Root>
MGK_DEV void rooted_copy(const sym_view<char>& x, const sym_view<char>& y, int64_t bytes, const block_flags& flags,
                         int start, int end, uint64_t epoch) {
  const span part = split_aligned(bytes, gridDim.x, blockIdx.x, 16);
  const int me = x.rank;
  char* dst;
  const char* src;
  if constexpr (L == rooted_layout::broadcast) {
    dst = y.local + part.begin;
    src = x.peer(Root) + part.begin;
  } else if constexpr (L == rooted_layout::scatter) {
    dst = y.local + part.begin;
    src = x.peer(Root) + me * bytes + part.begin;
  } else {
    dst = y.peer(Root) + me * bytes + part.begin;
    src = x.local + part.begin;
  }
  block_rooted_copy<Mech, Unroll>(dst, src, part.size(), flags.slots(start, blockIdx.x), flags.slots(end, blockIdx.x),
                                  Root, epoch, detail::rooted_copy_what<L>());
}

}  // namespace mgk::prim
