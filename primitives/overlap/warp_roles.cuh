// Intra-SM overlap: warp specialisation. Some warps of a block produce (load tiles, receive
// peer data with TMA), the others consume (compute, send), handing buffers over through a
// ring of shared-memory stages guarded by mbarriers: `full` says a stage holds data,
// `empty` says it may be refilled. The producer runs up to Stages stages ahead.
#pragma once
#include "../mechanism/tma_bulk.cuh"

namespace mgk::prim {

// Named barriers sync a subset of the block's warps (ids 1..15; id 0 is __syncthreads).
// `threads` is the number of threads taking part, a multiple of 32.
MGK_DEV void named_barrier_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}
MGK_DEV void named_barrier_arrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

// The mbarriers of a ring of Stages stages (the buffers themselves are the caller's).
template <int Stages>
struct stage_ring {
  uint64_t full[Stages];
  uint64_t empty[Stages];

  // All threads call it. `producer_arrivals`: arrivals that fill a stage (1 when one thread
  // issues a TMA load with expect_tx); `consumer_arrivals`: arrivals that free it (e.g. one
  // per consumer warp).
  MGK_DEV void init(uint32_t producer_arrivals, uint32_t consumer_arrivals) {
    if (threadIdx.x == 0) {
      for (int i = 0; i < Stages; ++i) {
        mbar_init(&full[i], producer_arrivals);
        mbar_init(&empty[i], consumer_arrivals);
      }
      fence_mbarrier_init();
    }
    __syncthreads();
  }

  MGK_HD static int stage(uint32_t k) { return int(k % Stages); }

  // Producer, before filling the k-th buffer (k = 0, 1, ...): waits until the consumers
  // freed it. The first Stages pass at once (a fresh barrier counts its phase "-1" done).
  MGK_DEV void producer_acquire(uint32_t k, const stall_site& site) {
    mbar_wait(&empty[stage(k)], ((k / Stages) & 1u) ^ 1u, site);
  }
  // Producer, plain stores: after writing the k-th buffer (each producer arrival).
  MGK_DEV void producer_commit(uint32_t k) { mbar_arrive(&full[stage(k)]); }
  // Producer, TMA: one thread announces the bytes, then issues bulk_load(..., &full[stage]).
  MGK_DEV void producer_expect(uint32_t k, uint32_t bytes) { mbar_arrive_expect_tx(&full[stage(k)], bytes); }

  // Consumer: waits until the k-th buffer is full (release/acquire at CTA scope: its
  // contents are visible after the wait).
  MGK_DEV void consumer_wait(uint32_t k, const stall_site& site) {
    mbar_wait(&full[stage(k)], (k / Stages) & 1u, site);
  }
  // Consumer: done reading the k-th buffer (each consumer arrival).
  MGK_DEV void consumer_release(uint32_t k) { mbar_arrive(&empty[stage(k)]); }
};

}  // namespace mgk::prim
