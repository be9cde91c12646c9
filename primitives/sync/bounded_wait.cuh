// Spin-waits that cannot hang forever. A multi-GPU kernel's usual failure is a rank that
// waits on a flag no one will set; after MGK_STALL_TIMEOUT_NS (default 5 s, measured with
// %globaltimer) the waiting thread prints
//   mgk: rank R stalled in <what> waiting on flag <i> (want >= X, have Y)
// (once per kernel module) and traps, so the harness reports where it stuck instead of
// timing out blind.
#pragma once
#include "flag_ops.cuh"

#ifndef MGK_STALL_TIMEOUT_NS
#define MGK_STALL_TIMEOUT_NS 5000000000ull
#endif

namespace mgk::prim {

// Where a wait happens, for the stall report: what was being waited for, the waiting rank
// and a flag number that identifies the slot (e.g. its index in the solution's flag buffer).
struct stall_site {
  const char* what;
  int rank;
  int64_t flag;
};

namespace detail {
static __device__ unsigned int stall_reported;  // first reporter prints, the rest only trap

static __device__ __noinline__ void report_stall_and_trap(const stall_site& site, uint64_t want, uint64_t have) {
  if (atomicExch(&stall_reported, 1u) == 0u)
    printf("mgk: rank %d stalled in %s waiting on flag %lld (want >= %llu, have %llu) [block %d thread %d]\n",
           site.rank, site.what, static_cast<long long>(site.flag), static_cast<unsigned long long>(want),
           static_cast<unsigned long long>(have), int(blockIdx.x), int(threadIdx.x));
  __trap();
}

MGK_DEV bool stalled(uint64_t start_ns, uint32_t spins) {
  // Reading the clock costs more than a poll of a local flag: look every 256 spins.
  return (spins & 255u) == 0u && globaltimer_ns() - start_ns > MGK_STALL_TIMEOUT_NS;
}
}  // namespace detail

// Waits until *flag >= want; returns the value seen. Acquire at system scope on every poll:
// whatever the signaller wrote before its release is visible to this thread afterwards
// (and to its whole block after a following __syncthreads). Called by one thread per flag.
MGK_DEV uint64_t wait_at_least(const uint64_t* flag, uint64_t want, const stall_site& site) {
  uint64_t v = ld_acquire_sys(flag);
  if (v >= want) return v;
  const uint64_t start = globaltimer_ns();
  for (uint32_t spins = 1;; ++spins) {
    v = ld_acquire_sys(flag);
    if (v >= want) return v;
    if (detail::stalled(start, spins)) detail::report_stall_and_trap(site, want, v);
  }
}

// Same contract, cheaper polls: spins with relaxed loads and issues one acquire fence after
// the value is seen. Prefer it when many threads poll at once.
MGK_DEV uint64_t wait_at_least_relaxed(const uint64_t* flag, uint64_t want, const stall_site& site) {
  uint64_t v = ld_relaxed_sys(flag);
  if (v < want) {
    const uint64_t start = globaltimer_ns();
    for (uint32_t spins = 1;; ++spins) {
      v = ld_relaxed_sys(flag);
      if (v >= want) break;
      if (detail::stalled(start, spins)) detail::report_stall_and_trap(site, want, v);
    }
  }
  fence_acq_rel_sys();
  return v;
}

}  // namespace mgk::prim
