// Block-scope signalling between GPUs: the block of one rank tells its counterpart blocks
// on other ranks that it reached a point (started, finished writing, finished reading).
//
// `slots` is a view of `world` flags on every rank (block_flags::slots). Rank s signals
// rank p by storing the epoch into p's slots[s]; p waits on its own slots[s].
// Every function here must be called by ALL threads of the block (it synchronises them),
// with the same arguments, on every rank that takes part.
#pragma once
#include "bounded_wait.cuh"
#include "epoch.cuh"

namespace mgk::prim {

// "All my block's memory operations so far are done": after a __syncthreads, one thread
// per target rank releases (system scope) the epoch into that rank's slot for me. Covers
// the block's plain loads and stores (local and remote). For TMA bulk stores, finish them
// first (tma_relay::drain). only_peer >= 0 signals that one rank instead of all others.
MGK_DEV void block_signal(const sym_view<uint64_t>& slots, uint64_t epoch, int only_peer = -1) {
  __syncthreads();
  for (int p = int(threadIdx.x); p < slots.world; p += int(blockDim.x)) {
    if (p == slots.rank || (only_peer >= 0 && p != only_peer)) continue;
    signal_store(slots.peer(p) + slots.rank, epoch);
  }
}

// Waits until every other rank (or only `only_peer`) has signalled >= epoch in my slots,
// then synchronises the block: afterwards every thread sees what those ranks wrote before
// signalling (acquire, system scope). `what` names the wait in the stall report.
MGK_DEV void block_wait(const sym_view<uint64_t>& slots, uint64_t epoch, const char* what, int only_peer = -1) {
  for (int p = int(threadIdx.x); p < slots.world; p += int(blockDim.x)) {
    if (p == slots.rank || (only_peer >= 0 && p != only_peer)) continue;
    const int64_t index = int64_t(slots.offset_bytes / sizeof(uint64_t)) + p;
    wait_at_least(slots.local + p, epoch, stall_site{what, slots.rank, index});
  }
  __syncthreads();
}

// A barrier between this block and its counterparts on every other rank: signal, then
// wait. Orders everything the block did before it before everything any counterpart does
// after it.
MGK_DEV void block_handshake(const sym_view<uint64_t>& slots, uint64_t epoch, const char* what) {
  block_signal(slots, epoch);
  block_wait(slots, epoch, what);
}

// A handshake as a launch of its own (launch it with one block; it uses pair 0 of `region`):
// orders work the host enqueued around it, such as copy-engine copies or a fill kernel,
// against the peers' (a template, so that several translation units may include it).
template <int = 0>
__global__ void handshake_kernel(block_flags flags, int region, uint64_t epoch) {
  block_handshake(flags.slots(region, 0), epoch, "a one-block handshake kernel (copy engine or slot fill)");
}

}  // namespace mgk::prim
