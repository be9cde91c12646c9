// TMA bulk copies (cp.async.bulk, sm_90): one thread hands a whole contiguous block of
// bytes to the SM's copy unit, which moves it asynchronously between shared memory and
// global memory: this GPU's or a PEER's (a sym_view::peer pointer works as the global
// address). A few SMs saturate NVLink this way, leaving the rest free for compute.
//
// Completion: global -> shared loads complete on an mbarrier (expect_tx bytes, then wait
// on the phase); shared -> global stores complete in bulk groups (commit, then wait_group;
// ".read" only waits until the shared source may be reused).
// Rules: addresses 16-byte aligned, sizes multiples of 16 bytes.
#pragma once
#include "../sync/bounded_wait.cuh"
#include "block_copy.cuh"

namespace mgk::prim {

// The shared-state-space address of a pointer into this block's shared memory.
MGK_DEV uint32_t smem_addr(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }

// ---- mbarriers (shared memory, 8 bytes each) ----

// One thread initialises a barrier that completes a phase after `arrivals` arrivals (plus
// any announced transfer bytes); then fence_mbarrier_init() and __syncthreads before use.
MGK_DEV void mbar_init(uint64_t* bar, uint32_t arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(arrivals) : "memory");
}
// Makes this thread's mbar_init visible to the TMA unit (and the rest of the cluster).
MGK_DEV void fence_mbarrier_init() { asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory"); }

// Arrive once (release, CTA scope).
MGK_DEV void mbar_arrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];" ::"r"(smem_addr(bar)) : "memory");
}

// Arrive once and announce `bytes` of asynchronous transfer that must also land before the
// phase completes (issue before or after the copies it covers, in the same phase).
MGK_DEV void mbar_arrive_expect_tx(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)),
               "r"(bytes)
               : "memory");
}

// True once the phase with parity `parity` has completed (waits a short while in hardware
// before answering false). Acquire at CTA scope.
MGK_DEV bool mbar_try_wait(uint64_t* bar, uint32_t parity) {
  uint32_t done;
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
      "selp.u32 %0, 1, 0, p;\n"
      "}\n"
      : "=r"(done)
      : "r"(smem_addr(bar)), "r"(parity)
      : "memory");
  return done != 0;
}

// Waits for the completion of the phase with parity `parity` (the k-th use of a barrier
// waits parity k & 1). Bounded like every wait here; `site.flag` names the barrier.
MGK_DEV void mbar_wait(uint64_t* bar, uint32_t parity, const stall_site& site) {
  if (mbar_try_wait(bar, parity)) return;
  const uint64_t start = globaltimer_ns();
  for (uint32_t spins = 1; !mbar_try_wait(bar, parity); ++spins)
    if (detail::stalled(start, spins)) detail::report_stall_and_trap(site, parity, parity ^ 1u);
}

// ---- bulk copies (one thread issues) ----

// global (local or peer) -> shared; completes on `bar` (count `bytes` with expect_tx).
MGK_DEV void bulk_load(void* smem_dst, const void* gmem_src, uint32_t bytes, uint64_t* bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                   smem_addr(smem_dst)),
               "l"(gmem_src), "r"(bytes), "r"(smem_addr(bar))
               : "memory");
}

// shared -> global (local or peer); part of the current bulk group.
MGK_DEV void bulk_store(void* gmem_dst, const void* smem_src, uint32_t bytes) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(gmem_dst),
               "r"(smem_addr(smem_src)), "r"(bytes)
               : "memory");
}

// shared -> global with an element-wise add at the destination (fp32 / bf16).
MGK_DEV void bulk_store_add_f32(float* gmem_dst, const void* smem_src, uint32_t bytes) {
  asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], %2;" ::"l"(gmem_dst),
               "r"(smem_addr(smem_src)), "r"(bytes)
               : "memory");
}
MGK_DEV void bulk_store_add_bf16(__nv_bfloat16* gmem_dst, const void* smem_src, uint32_t bytes) {
  asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.noftz.bf16 [%0], [%1], %2;" ::"l"(gmem_dst),
               "r"(smem_addr(smem_src)), "r"(bytes)
               : "memory");
}

// Closes the current bulk group (stores issued since the last commit).
MGK_DEV void bulk_commit() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }

// Waits until at most Pending groups still READ their shared source (then it may be reused).
template <int Pending>
MGK_DEV void bulk_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(Pending) : "memory");
}

// Waits until at most Pending groups are incomplete (their writes are done and visible to this
// thread).
template <int Pending>
MGK_DEV void bulk_wait() {
  asm volatile("cp.async.bulk.wait_group %0;" ::"n"(Pending) : "memory");
}

// Orders this thread's generic-proxy accesses with async-proxy (TMA) ones: after writing
// shared memory with plain stores and before a bulk store reads it (.shared::cta), or
// between TMA writes to global memory and plain accesses that must follow them (.global).
MGK_DEV void fence_proxy_async_shared() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }
MGK_DEV void fence_proxy_async_global() { asm volatile("fence.proxy.async.global;" ::: "memory"); }

// ---- global -> shared -> global relay ----

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
