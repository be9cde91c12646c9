// Back-pressure for one-way flows on Lamport slots (rooted collectives). Slots alternate by
// call parity, which is safe when every rank waits for data from every other (nobody gets
// two calls ahead); a rank that only sends would not wait at all. So each receiving block
// announces, at the start of each call, that it has begun it (it is done with the call
// before), and a sending block waits, before it sends, until its receivers have begun the
// previous call: then the slots of the call two back, which it is about to reuse, are read
// and emptied. Off the critical path: the announcement leaves as the call starts, and the
// wait is normally already satisfied.
#pragma once
#include "../sync/peer_signals.cuh"

namespace mgk::prim {

// Who sends to whom: every rank to every rank, only the root to the others (broadcast,
// scatter), or only the others to the root (gather, reduce; the root keeps its own piece).
enum class flow { all, from_root, to_root };

// `credits`: this block's slots of a flag region of their own (block_flags::slots(region,
// blockIdx.x)); `f` is flow::from_root or flow::to_root (flow::all needs no credits). All
// threads of the block call it, first thing in the call.
MGK_DEV void lamport_credits(const sym_view<uint64_t>& credits, uint64_t epoch, flow f, int root, const char* what) {
  const bool from_root = f == flow::from_root;
  const bool sends = from_root == (credits.rank == root);
  if (sends)
    block_wait(credits, epoch - 1, what, from_root ? -1 : root);
  else
    block_signal(credits, epoch, from_root ? root : -1);
}

}  // namespace mgk::prim
