// The Lamport protocol's slots: flag-free pushes for small messages. The usual push (remote stores, then a system-scope
// fence and a flag) pays a round trip before the flag may leave (the fence waits until
// every remote store is acknowledged) plus the flag's own trip; below a few MB that is
// most of the time. Lamport slots let the receiver see the data itself arrive instead:
// the receiver's landing memory is pre-filled with an "empty" 32-bit word. Each thread
// pushes 16-byte vectors; the receiver spins on each vector until none of its four words
// is "empty", takes it, and writes "empty" back for the next use of the slot. A vector
// that really contains the empty word (rare: it is a NaN pattern) is published by an
// escape flag per vector, written after a system-scope fence, so the scheme is exact for
// every bit pattern, at full link bandwidth.
// (NCCL's LL packets, 8 payload bytes + a flag per 16-byte store, are the other way; they
// halve the bandwidth and measured slower than a flagged push for a 1 MiB all-gather on
// 2 x H200.)
//
// Slots are double-buffered by call parity (a sender can be one call ahead of its
// receiver, never two: it waited for the receiver's data of the previous call), and the
// waits are bounded (sync/bounded_wait.cuh) so a missing peer is reported, not hung on.
#pragma once
#include "../sync/bounded_wait.cuh"
#include "../mechanism/vec_io.cuh"

namespace mgk::prim {

// The per-call value of escape flags: never 0 (zero-filled memory means
// "before call 1"), different for consecutive calls.
MGK_HD uint32_t call_flag(uint64_t epoch) { return uint32_t(epoch % 0xffffffffull) + 1u; }

constexpr uint32_t kLamportEmpty = 0xffc0dea1u;  // a NaN as fp32; as two bf16, a NaN and -5.8e18

// One (parity, source) slot of a rank's Lamport landing memory: `data` holds 16-byte
// vectors, `escape` one flag per vector (see lamport_send).
struct lamport_slot {
  char* data;
  uint32_t* escape;
};

// The Lamport landing memory of a one-shot collective, one symmetric buffer per rank:
// [2 parities][world sources] slots of slot_bytes (a multiple of 16), then the escape flags
// of every slot, one uint32 per 16-byte vector. Owned by a landing_memory (host/).
struct lamport_slots {
  sym_view<char> mem;
  size_t slot_bytes;

  static MGK_HD size_t bytes(int world, size_t slot_bytes) {
    return 2 * size_t(world) * (slot_bytes + slot_bytes / 16 * sizeof(uint32_t));
  }
  // The data part (what landing_memory fills with "empty"; a flagged one-shot uses it too).
  MGK_HD size_t data_bytes() const { return 2 * size_t(mem.world) * slot_bytes; }
  // Rank `to`'s slot for me in call `epoch`: where I send.
  MGK_DEV lamport_slot outbox(int to, uint64_t epoch) const { return slot(mem.peer(to), mem.rank, epoch); }
  // My slot for rank `from` in call `epoch`: where I receive.
  MGK_DEV lamport_slot inbox(int from, uint64_t epoch) const { return slot(mem.local, from, epoch); }
  // Where the data of the slot for `source` in call `epoch` starts, from any rank's base.
  MGK_HD size_t data_offset(int source, uint64_t epoch) const {
    return (size_t(epoch & 1) * size_t(mem.world) + size_t(source)) * slot_bytes;
  }

 private:
  MGK_DEV lamport_slot slot(char* base, int source, uint64_t epoch) const {
    const size_t off = data_offset(source, epoch);
    return lamport_slot{base + off, reinterpret_cast<uint32_t*>(base + data_bytes()) + off / 16};
  }
};

#ifndef MGK_LAMPORT_ESCAPE_ALL
#define MGK_LAMPORT_ESCAPE_ALL 0  // 1: every vector takes the escape path (tests use it)
#endif

MGK_DEV bool lamport_has_empty(uint4 v) {
  return MGK_LAMPORT_ESCAPE_ALL || v.x == kLamportEmpty || v.y == kLamportEmpty || v.z == kLamportEmpty || v.w == kLamportEmpty;
}

// Pushes vector `v` of this call (flag = call_flag(epoch)) into slot `to` (a peer's).
MGK_DEV void lamport_send(const lamport_slot& to, int64_t v, uint4 value, uint32_t flag) {
  st16(to.data + v * 16, value);
  if (lamport_has_empty(value)) {  // the receiver cannot tell it from "not yet": publish
    fence_acq_rel_sys();
    asm volatile("st.relaxed.sys.global.u32 [%0], %1;" ::"l"(to.escape + v), "r"(flag) : "memory");
  }
}

// Completes receiving vector `v` from slot `from` (mine): `seen` is what a first
// ld16_volatile of it returned (issue several before calling this, so their latencies
// overlap). Waits until it has landed, marks it empty again and returns it.
MGK_DEV uint4 lamport_take(const lamport_slot& from, int64_t v, uint4 seen, uint32_t flag,
                           const stall_site& site) {
  char* const at = from.data + v * 16;
  if (lamport_has_empty(seen)) {
    const uint64_t start = globaltimer_ns();
    for (uint32_t spins = 1;; ++spins) {
      uint32_t escaped;
      asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(escaped) : "l"(from.escape + v) : "memory");
      seen = ld16_volatile(at);  // after an acquire of the escape flag: the final value
      if (escaped == flag || !lamport_has_empty(seen)) break;
      if (detail::stalled(start, spins)) detail::report_stall_and_trap(site, flag, escaped);
    }
  }
  st16(at, make_uint4(kLamportEmpty, kLamportEmpty, kLamportEmpty, kLamportEmpty));
  return seen;
}

namespace detail {
template <int = 0>
__global__ void lamport_fill_kernel(uint32_t* words, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    words[i] = kLamportEmpty;
}
}  // namespace detail

}  // namespace mgk::prim
