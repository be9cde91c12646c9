// A chunked pipeline across GPUs: the producer on one rank writes a message chunk by chunk
// into the consumer's memory and signals each chunk as it lands, so the consumer starts on
// chunk 0 while chunk 1 is still in flight (communication overlapped with computation, or
// with the next hop of a ring). One flag per (chunk, source rank), epoch-valued.
#pragma once
#include "../sync/bounded_wait.cuh"
#include "../sync/epoch.cuh"

namespace mgk::prim {

struct chunk_flags {
  sym_view<uint64_t> base;  // chunks * world zero-filled uint64 on every rank
  int chunks;

  static constexpr size_t bytes(int chunks, int world) { return size_t(chunks) * size_t(world) * sizeof(uint64_t); }

  // Producer, one thread, after the chunk's data is written and ordered before this thread
  // (its own stores, or the block's after __syncthreads, or TMA stores after drain):
  // tells rank `to` that chunk `chunk` from me is complete for this epoch.
  MGK_DEV void signal(int to, int chunk, uint64_t epoch) const {
    signal_store(base.peer(to) + int64_t(chunk) * base.world + base.rank, epoch);
  }

  // Consumer, one thread: waits until rank `from` signalled chunk `chunk` for this epoch;
  // afterwards this thread sees the chunk (the block: after a __syncthreads).
  MGK_DEV void wait(int from, int chunk, uint64_t epoch, const char* what) const {
    const int64_t slot = int64_t(chunk) * base.world + from;
    wait_at_least(base.local + slot, epoch,
                  stall_site{what, base.rank, int64_t(base.offset_bytes / sizeof(uint64_t)) + slot});
  }

  // Consumer, all threads of a block: waits for the chunk from every rank but me, then syncs.
  MGK_DEV void block_wait_all(int chunk, uint64_t epoch, const char* what) const {
    for (int r = int(threadIdx.x); r < base.world; r += int(blockDim.x))
      if (r != base.rank) wait(r, chunk, epoch, what);
    __syncthreads();
  }
};

}  // namespace mgk::prim
