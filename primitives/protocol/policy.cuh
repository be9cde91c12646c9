// The protocols of a push: how the receiver learns that data has landed. A policy type,
// chosen at compile time like block_mover<Mech>'s mechanism, so one algorithm
// (algorithm/one_shot.cuh) serves both:
//
//   flagged: the data goes out with plain stores, then one release signal per block pair
//            (sync/peer_signals.cuh); the receiver waits for the signal, then reads. Any
//            size. The signal costs a round trip (the fence waits for every remote store to
//            be acknowledged) plus the flag's own trip.
//   lamport: the receiver's slots are pre-filled with an "empty" word and it watches each
//            16-byte vector arrive (lamport_slots.cuh): no signal at all. Sizes that are a
//            multiple of 16 bytes; the slots must be "empty" (landing_memory refills them
//            when a flagged push used them last).
//
// What to pick: lamport for small and medium messages (below a few MB, where the
// signal's round trips are most of the time), flagged for sizes that are not whole vectors.
#pragma once

namespace mgk::prim {

struct flagged {
  static constexpr bool whole_vectors = false;  // any size (a multiple of the element size)
};

struct lamport {
  static constexpr bool whole_vectors = true;  // bytes must be a multiple of 16
};

}  // namespace mgk::prim
