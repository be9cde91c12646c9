// A TMA relay: global -> shared -> global bulk copies with several chunks in flight, so one
// thread moves a large contiguous range (to or from a peer) while the block's other threads
// are free. Built on tma_bulk.cuh; block_mover<kTma> wraps it behind the common interface.
#pragma once
#include "block_copy.cuh"
#include "tma_bulk.cuh"

namespace mgk::prim {

// Shared memory for a relay: Stages buffers of StageBytes plus one mbarrier each.
template <int Stages, int StageBytes>
struct tma_relay_smem {
  alignas(128) unsigned char stage[Stages][StageBytes];
  uint64_t bar[Stages];
};

// Copies global -> global through shared memory with bulk copies, Stages chunks in
// flight: loads run ahead while up to two stores drain. Either side may be a peer's memory
// (peer destination: a TMA "push"; peer source: a TMA "pull").
// Usage: every thread calls init(); ONE thread (conventionally thread 0) calls copy() any
// number of times and then drain(), which must happen before the block signals the data
// (block_signal) or exits.
template <int Stages = 4, int StageBytes = 8192>
struct tma_relay {
  static_assert(Stages >= 2, "the relay refills a stage one chunk behind: it needs at least 2 stages");
  static_assert(StageBytes % 16 == 0, "bulk copies move multiples of 16 bytes");
  using smem_t = tma_relay_smem<Stages, StageBytes>;

  smem_t* s;
  uint32_t chunks;  // chunks relayed so far by the issuing thread: picks stage and parity
  stall_site site;

  // All threads of the block; synchronises the block.
  MGK_DEV void init(smem_t* smem, const char* what, int rank) {
    s = smem;
    chunks = 0;
    site = stall_site{what, rank, -1};
    if (threadIdx.x == 0) {
      for (int i = 0; i < Stages; ++i) mbar_init(&s->bar[i], 1);
      fence_mbarrier_init();
    }
    __syncthreads();
  }

  // Issuing thread only. dst, src 16-byte aligned; bytes a multiple of 16.
  MGK_DEV void copy(void* dst, const void* src, int64_t bytes) {
    char* d = static_cast<char*>(dst);
    const char* from = static_cast<const char*>(src);
    const int64_t n = ceil_div(bytes, StageBytes);
    auto length = [&](int64_t k) { return uint32_t(min(int64_t(StageBytes), bytes - k * StageBytes)); };
    auto load_chunk = [&](int64_t k) {
      const uint32_t st = (chunks + uint32_t(k)) % Stages;
      mbar_arrive_expect_tx(&s->bar[st], length(k));
      bulk_load(s->stage[st], from + k * StageBytes, length(k), &s->bar[st]);
    };
    bulk_wait_read<0>();  // stores of a previous copy may still read the stages
    for (int64_t k = 0; k < n && k < Stages; ++k) load_chunk(k);
    for (int64_t k = 0; k < n; ++k) {
      const uint32_t g = chunks + uint32_t(k);
      mbar_wait(&s->bar[g % Stages], (g / Stages) & 1u, site);
      bulk_store(d + k * StageBytes, s->stage[g % Stages], length(k));
      bulk_commit();
      // The stage of chunk k - 1 is free once its store has read it (store k may still be
      // reading): refill it with chunk k - 1 + Stages.
      if (k >= 1 && k - 1 + Stages < n) {
        bulk_wait_read<1>();
        load_chunk(k - 1 + Stages);
      }
    }
    chunks += uint32_t(n);
  }

  // Issuing thread only: waits until every store has landed and orders them before this
  // thread's later (generic, system-scope) accesses, e.g. the signal that follows.
  MGK_DEV void drain() {
    bulk_wait<0>();
    fence_proxy_async_global();
    fence_acq_rel_sys();
  }
};

// Block-cooperative copy through a relay: thread 0 relays the 16-byte body, the block copies
// any tail; falls back to block_copy when dst or src is not 16-byte aligned. All threads
// call it; thread 0 must call relay.drain() before the data is signalled.
template <class Relay, int Unroll = 4>
MGK_DEV void block_copy_tma(Relay& relay, void* dst, const void* src, int64_t bytes) {
  if (!is_aligned(dst, 16) || !is_aligned(src, 16)) {
    block_copy<Unroll>(dst, src, bytes);
    return;
  }
  const int64_t body = bytes / 16 * 16;
  if (threadIdx.x == 0 && body > 0) relay.copy(dst, src, body);
  if (body < bytes)
    block_copy_units<1, 1>(static_cast<char*>(dst) + body, static_cast<const char*>(src) + body, bytes - body);
}

}  // namespace mgk::prim
