// A barrier across every block of the grid on every rank (the grid-wide counterpart of
// block_handshake): no block of any rank passes it before every block of every rank has
// reached it, and everything written before it is visible after it.
//
// Requires all blocks of the grid to be resident at once (grid <= resident_blocks(...), or
// a cooperative launch); otherwise it deadlocks and the stall report names it. When a
// kernel only needs "my block's partner blocks are done", block_handshake is cheaper.
#pragma once
#include "peer_signals.cuh"

namespace mgk::prim {

// Slots needed per rank: `world` for the cross-GPU step, 1 release flag, one per block.
MGK_HD constexpr size_t grid_barrier_slots(int world, int max_blocks) {
  return size_t(world) + 1 + size_t(max_blocks);
}

// `flags`: a view of grid_barrier_slots(world, gridDim.x) zero-initialised uint64 on every
// rank, used by nothing else. Called by all threads of all blocks, with the same epoch
// (each use in a launch needs a larger epoch than the previous use of the same flags).
MGK_DEV void grid_barrier(const sym_view<uint64_t>& flags, uint64_t epoch, const char* what) {
  const int world = flags.world;
  uint64_t* release = flags.local + world;
  uint64_t* arrive = flags.local + world + 1;
  const int64_t first = int64_t(flags.offset_bytes / sizeof(uint64_t));
  // 1. Every block announces itself locally (release at system scope: its remote writes
  //    must be covered when block 0 passes the news on to the other GPUs).
  __syncthreads();
  if (threadIdx.x == 0) signal_store(arrive + blockIdx.x, epoch);
  // 2. Block 0 collects the local blocks, then meets block 0 of every other rank.
  if (blockIdx.x == 0) {
    for (int b = int(threadIdx.x); b < int(gridDim.x); b += int(blockDim.x))
      wait_at_least(arrive + b, epoch, stall_site{what, flags.rank, first + world + 1 + b});
    block_handshake(flags, epoch, what);  // slots [0, world); syncs the block first
    if (threadIdx.x == 0) signal_store(release, epoch);
  }
  // 3. Everyone waits for block 0's release.
  if (threadIdx.x == 0) wait_at_least(release, epoch, stall_site{what, flags.rank, first + world});
  __syncthreads();
}

}  // namespace mgk::prim
