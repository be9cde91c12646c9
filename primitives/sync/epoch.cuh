// Flags that need no reset between launches.
//
// Every call of a collective gets a fresh epoch 1, 2, 3, ... (counted on the host by an
// epoch_counter, host/epoch_counter.cuh: the same sequence on every rank because every rank
// makes the same calls). A signal stores the epoch; a wait waits for ">= epoch". Values only grow, so a flag left at epoch e by the
// previous call already reads as "not yet" for call e + 1, and nothing has to clear it
// (clearing would race with a fast peer's next signal). Zero-filled symmetric memory is a
// valid "before call 1" state. Within one call, each slot may be signalled once; a slot
// used twice per call needs two values per call (e.g. 2e and 2e + 1).
#pragma once
#include "../memory/sym_view.cuh"

namespace mgk::prim {

// The flag slots of a solution, laid out [region][pair][source rank] on every rank:
// `region` names a phase of the protocol (start, data, end...), `pair` the index that is
// the same on both sides (usually blockIdx.x: block b of every rank talks to block b of
// every other rank), and the source rank is the slot a signaller writes in the receiver's
// copy, so each slot has exactly one writer.
struct block_flags {
  sym_view<uint64_t> base;  // regions * pairs * world uint64 flags, zero-filled
  int pairs;

  // Bytes to allocate (ctx->sym_alloc) for `regions` x `pairs` on `world` ranks.
  static constexpr size_t bytes(int regions, int pairs, int world) {
    return size_t(regions) * size_t(pairs) * size_t(world) * sizeof(uint64_t);
  }

  // The `world` slots of (region, pair): slots.local[s] is where rank s signals me.
  MGK_HD sym_view<uint64_t> slots(int region, int pair) const {
    return base.at((int64_t(region) * pairs + pair) * base.world);
  }
};

}  // namespace mgk::prim
