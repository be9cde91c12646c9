// One block-cooperative copy interface over two SM-driven mechanisms, so a kernel can make
// the mechanism a compile-time knob:
//   kRegisters: every thread moves 16-byte vectors (needs many SMs to fill NVLink);
//   kTma:       thread 0 relays through shared memory with bulk copies (few SMs suffice;
//               the other threads only copy unaligned tails).
#pragma once
#include "block_copy.cuh"
#include "tma_relay.cuh"

namespace mgk::prim {

enum mechanism : int { kRegisters = 0, kTma = 1 };

// Usage, all threads of the block: init(); any number of copy(); finish(); then signal.
template <int Mech, int Unroll = 4, int Stages = 4, int StageBytes = 8192>
struct block_mover {
  static_assert(Mech == kRegisters || Mech == kTma, "mechanism must be kRegisters (0) or kTma (1)");
  tma_relay<Stages, StageBytes> relay;

  MGK_DEV void init(const char* what, int rank) {
    if constexpr (Mech == kTma) {
      __shared__ typename tma_relay<Stages, StageBytes>::smem_t smem;
      relay.init(&smem, what, rank);
    }
  }

  // Copies `bytes` bytes; either side may be a peer's memory. Any size and alignment.
  MGK_DEV void copy(void* dst, const void* src, int64_t bytes) {
    if constexpr (Mech == kTma)
      block_copy_tma<tma_relay<Stages, StageBytes>, Unroll>(relay, dst, src, bytes);
    else
      block_copy<Unroll>(dst, src, bytes);
  }

  // Completes every copy this block issued (TMA stores included) before a following
  // block_signal. The register path needs nothing: block_signal's __syncthreads suffices.
  MGK_DEV void finish() {
    if constexpr (Mech == kTma)
      if (threadIdx.x == 0) relay.drain();
  }
};

}  // namespace mgk::prim
