// Host side, part of a solution's state: the landing memory of one-shot pushes
// (algorithm/one_shot.cuh), and which protocol used it last.
#pragma once
#include "../protocol/lamport_slots.cuh"
#include "../protocol/policy.cuh"
#include "../sync/peer_signals.cuh"
#include "views.cuh"

namespace mgk::prim {

// A rank's landing memory for one-shot pushes. Both protocols use the same slots
// (protocol/lamport_slots.cuh): a Lamport call needs every slot "empty", a flagged push
// leaves its data there. Each asks for the slots through its own call (or slots_for<P>),
// so the state of the memory is tracked here and not by every caller.
class landing_memory {
 public:
  // Setup, collective (like sym_alloc): slots of `slot_bytes` bytes (rounded up to 16);
  // 0 allocates nothing and leaves capacity() at 0.
  int alloc(mgk_ctx* ctx, size_t slot_bytes) {
    if (slot_bytes == 0) return 0;
    slot_bytes = size_t(round_up(int64_t(slot_bytes), 16));
    mgk_sym_buffer buf{};
    if (sym_alloc(ctx, lamport_slots::bytes(ctx->world_size, slot_bytes), "one-shot landing slots", &buf) != 0)
      return 1;
    slots_ = lamport_slots{view_of<char>(ctx, buf), slot_bytes};
    return 0;
  }
  // The most bytes one slot holds (0: no landing memory).
  size_t capacity() const { return slots_.slot_bytes; }

  // For a Lamport call. When the slots may not all be "empty" (the first call, or a
  // flagged push since), enqueues a fill and a one-block handshake (pair 0 of flag region
  // `region`) so that no peer pushes before every rank has emptied its slots.
  cudaError_t for_lamport(const block_flags& flags, int region, uint64_t epoch, cudaStream_t stream,
                          lamport_slots* out) {
    *out = slots_;
    if (emptied_) return cudaSuccess;
    detail::lamport_fill_kernel<<<264, 512, 0, stream>>>(reinterpret_cast<uint32_t*>(slots_.mem.local),
                                                         slots_.data_bytes() / 4);
    handshake_kernel<<<1, 32, 0, stream>>>(flags, region, epoch);
    emptied_ = true;
    return cudaGetLastError();
  }
  // For a flagged push: the same slots, which will then hold its data.
  lamport_slots for_flagged() {
    emptied_ = false;
    return slots_;
  }

  // The slots for a push with protocol P (flagged or lamport), as the two calls above.
  template <class P>
  cudaError_t slots_for(const block_flags& flags, int region, uint64_t epoch, cudaStream_t stream,
                        lamport_slots* out) {
    if constexpr (P::whole_vectors) return for_lamport(flags, region, epoch, stream, out);
    *out = for_flagged();
    return cudaSuccess;
  }

 private:
  lamport_slots slots_{};
  bool emptied_ = false;
};

}  // namespace mgk::prim
