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

}  // namespace mgk::prim
