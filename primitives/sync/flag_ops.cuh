// Single-thread operations on 64-bit flags, at system scope so that they order memory
// across GPUs. A flag lives in symmetric memory; the writer stores into the PEER's copy
// (over NVLink), the reader spins on its OWN copy (local memory, cheap to poll).
//
// Why system scope: .gpu scope only orders accesses as seen from the same GPU. Data a
// peer reads over NVLink, or that a peer wrote into our memory, is only covered by .sys.
// Why release/acquire: a release store makes every write the thread (and, through a
// preceding __syncthreads, its whole block) made before it visible to whoever acquires
// the flag value; without it the flag can arrive before the data it announces.
#pragma once
#include "../common/base.cuh"

namespace mgk::prim {

// Orders all earlier memory operations of this thread (and those of its block made visible
// to it by a __syncthreads) before all later ones, for observers on any GPU.
MGK_DEV void fence_acq_rel_sys() { asm volatile("fence.acq_rel.sys;" ::: "memory"); }
MGK_DEV void fence_acq_rel_gpu() { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }

// Reads a flag; later accesses of this thread see what the writer released before it.
MGK_DEV uint64_t ld_acquire_sys(const uint64_t* flag) {
  uint64_t v;
  asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(flag) : "memory");
  return v;
}

// Reads a flag with no ordering (always fresh, never cached): poll with it, then fence.
MGK_DEV uint64_t ld_relaxed_sys(const uint64_t* flag) {
  uint64_t v;
  asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(flag) : "memory");
  return v;
}

// Writes a flag with no ordering: precede it with fence_acq_rel_sys() to publish data.
MGK_DEV void st_relaxed_sys(uint64_t* flag, uint64_t v) {
  asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(flag), "l"(v) : "memory");
}

// Writes a flag after this thread's earlier accesses are visible system-wide.
MGK_DEV void st_release_sys(uint64_t* flag, uint64_t v) {
  asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(flag), "l"(v) : "memory");
}

// Atomically adds to a flag (no return value) after this thread's earlier accesses are
// visible system-wide.
MGK_DEV void red_add_release_sys(uint64_t* flag, uint64_t v) {
  asm volatile("red.release.sys.global.add.u64 [%0], %1;" ::"l"(flag), "l"(v) : "memory");
}

// Signal by storing a value (an epoch): release at system scope, written as NCCL does it
// (a full fence, then a relaxed store) so that writes by the rest of the block, ordered
// before this thread by a __syncthreads, are covered too. Use when exactly one writer owns
// the flag (e.g. slot [my rank] in the peer's array): values only ever grow.
MGK_DEV void signal_store(uint64_t* flag, uint64_t value) {
  fence_acq_rel_sys();
  st_relaxed_sys(flag, value);
}

// Signal by adding (release, system scope): use when several writers count into one flag;
// the waiter then waits for >= epoch * writers.
MGK_DEV void signal_add(uint64_t* flag, uint64_t delta) {
  fence_acq_rel_sys();
  red_add_release_sys(flag, delta);
}

}  // namespace mgk::prim
