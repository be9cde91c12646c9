// The direct push of an exchange, for every block of a kernel's grid: between a start
// handshake (every peer's y may be written) and an end handshake (everything pushed into my
// y has landed), each rank stores its pieces straight into every rank's y at its own place,
// peers first (the link is the long pole), its own y last. No landing slot and no local
// copy: the large-message choice, by register stores or TMA bulk copies (Mech, see
// mechanism/block_mover.cuh). The copy-engine form of the same push is host work
// (collective/exchange.cuh).
#pragma once
#include "../mechanism/block_mover.cuh"
#include "../sync/peer_signals.cuh"

namespace mgk::prim {

// What rank p gets from me: all of my x (all-gather) or the p-th piece of it (all-to-all).
// Either way it lands in p's y at [me * part_bytes, + part_bytes).
enum class exchange_layout { all_gather, all_to_all };

namespace detail {
template <exchange_layout L>
MGK_DEV const char* direct_push_what(int site) {  // 0: TMA stage, 1: start, 2: end
  if constexpr (L == exchange_layout::all_gather)
    return site == 0 ? "all_gather push: TMA stage" : site == 1 ? "all_gather push: start" : "all_gather push: end";
  else
    return site == 0 ? "all_to_all push: TMA stage" : site == 1 ? "all_to_all push: start" : "all_to_all push: end";
}
}  // namespace detail

// x: my input (local); y: the symmetric output; part_bytes: what one rank sends another;
// `start`, `end`: flag regions of `flags` of their own (pair blockIdx.x).
template <exchange_layout L, int Mech, int Unroll>
MGK_DEV void direct_push(const char* x, const sym_view<char>& y, int64_t part_bytes, const block_flags& flags,
                         int start, int end, uint64_t epoch) {
  const int me = y.rank, world = y.world;
  const span part = split_aligned(part_bytes, gridDim.x, blockIdx.x, 16);
  block_mover<Mech, Unroll> mover;
  mover.init(detail::direct_push_what<L>(0), me);
  block_handshake(flags.slots(start, blockIdx.x), epoch, detail::direct_push_what<L>(1));
  for (int k = 1; k <= world; ++k) {
    const int p = (me + k) % world;
    if constexpr (L == exchange_layout::all_gather)
      mover.copy(y.peer(p) + me * part_bytes + part.begin, x + part.begin, part.size());
    else
      mover.copy(y.peer(p) + me * part_bytes + part.begin, x + p * part_bytes + part.begin, part.size());
  }
  mover.finish();
  block_handshake(flags.slots(end, blockIdx.x), epoch, detail::direct_push_what<L>(2));
}

}  // namespace mgk::prim
