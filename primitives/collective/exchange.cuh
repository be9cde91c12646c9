// All-gather and all-to-all as one template over the layout (algorithm/direct_push.cuh's
// exchange_layout). Pure data movement, so it works on bytes (any dtype). Four ways, chosen
// per call by the size of what one rank sends another (its piece):
//   * Lamport one-shot (a multiple of 16 bytes, <= lamport_max_bytes): each rank pushes its
//     pieces into landing slots pre-filled with an "empty" word; the receiver sees each
//     vector land and copies it into y; no signal (protocol/lamport_slots.cuh);
//   * flagged one-shot (<= one_shot_max_bytes): the same push, then one signal per block
//     pair; the extra local copy is cheap while the data is in L2;
//   * copy engine (>= ce_min_bytes): a direct push as cudaMemcpyAsync between two one-block
//     handshake kernels, over ce_streams side streams;
//   * direct push (otherwise): between two handshakes, straight into every rank's y, by
//     register stores or TMA bulk copies (mech).
// One-shot slots are double-buffered by epoch parity, so no start barrier is needed.
//
// Config C: int threads, unroll, blocks (0: one per SM), lamport_lag, mech, ce_streams;
// size_t one_shot_max_bytes, lamport_max_bytes, ce_min_bytes. Block b of every rank pairs
// with block b of every other (the grid is agreed at setup).
#pragma once
#include "../algorithm/direct_push.cuh"
#include "../algorithm/one_shot.cuh"
#include "entry.cuh"

namespace mgk::prim {

namespace detail {
enum exchange_region {
  kExchangeLanded, kExchangeStart, kExchangeEnd, kExchangeCeStart, kExchangeCeEnd, kExchangeEmptied, kExchangeRegions
};

template <exchange_layout L, class P>
MGK_DEV const char* exchange_what() {
  constexpr bool gather = L == exchange_layout::all_gather;
  if constexpr (P::whole_vectors)
    return gather ? "all_gather lamport: the peers' data" : "all_to_all lamport: the peers' data";
  else
    return gather ? "all_gather one-shot: the peers' data" : "all_to_all one-shot: the peers' data";
}
}  // namespace detail

template <exchange_layout L, class C, class P>
__global__ void __launch_bounds__(C::threads) exchange_one_shot(one_shot_args a, block_flags flags) {
  one_shot_exchange<P, C::unroll, C::lamport_lag>(a, flags.slots(detail::kExchangeLanded, blockIdx.x),
                                                  detail::exchange_what<L, P>());
}

template <exchange_layout L, class C>
__global__ void __launch_bounds__(C::threads)
    exchange_push(const char* x, sym_view<char> y, int64_t part_bytes, block_flags flags, uint64_t epoch) {
  direct_push<L, C::mech, C::unroll>(x, y, part_bytes, flags, detail::kExchangeStart, detail::kExchangeEnd, epoch);
}

template <exchange_layout L, class C>
struct exchange {
  static constexpr bool gather = L == exchange_layout::all_gather;
  static constexpr const char* name = gather ? "all_gather" : "all_to_all";

  static int setup(mgk_ctx* ctx) {
    int64_t elems;  // of one piece
    size_t elt;
    if (setup_collective<C>(ctx, gather ? "N" : "C", detail::kExchangeRegions, &elems, &elt,
                            exchange_one_shot<L, C, lamport>, exchange_one_shot<L, C, flagged>,
                            exchange_push<L, C>) != 0)
      return 1;
    collective_state& st = state_of(ctx);
    MGK_CUDA_TRY(ctx, ce_create(&st.ce, C::ce_streams));
    const size_t one_shot_max =
        C::one_shot_max_bytes > C::lamport_max_bytes ? C::one_shot_max_bytes : C::lamport_max_bytes;
    return st.landing.alloc(ctx, landing_slot_bytes(elems, elt, one_shot_max));
  }

  static int run(mgk_ctx* ctx, const mgk_tensor* in, int n_in, const mgk_tensor* out, int n_out,
                 cudaStream_t stream) {
    collective_state* st = &state_of(ctx);
    const mgk_tensor *x, *y;
    if (find_x_y(ctx, name, in, n_in, out, n_out, &x, &y) != 0) return 1;
    const uint64_t epoch = st->epoch.next();
    const int me = ctx->rank, world = ctx->world_size;
    const size_t part = gather ? mgk::nbytes(*x) : mgk::nbytes(*x) / size_t(world);  // what one rank sends another
    one_shot_args a{static_cast<const char*>(x->data), gather ? 0 : part, static_cast<char*>(y->data), part, part, {},
                    epoch};
    const bool fits = part <= st->landing.capacity();
    if (fits && part % 16 == 0 && part <= C::lamport_max_bytes) {
      MGK_CUDA_TRY(ctx, st->landing.slots_for<lamport>(st->flags, detail::kExchangeEmptied, epoch, stream, &a.landing));
      exchange_one_shot<L, C, lamport><<<st->blocks, C::threads, 0, stream>>>(a, st->flags);
    } else if (fits && part <= C::one_shot_max_bytes) {
      MGK_CUDA_TRY(ctx, st->landing.slots_for<flagged>(st->flags, detail::kExchangeEmptied, epoch, stream, &a.landing));
      exchange_one_shot<L, C, flagged><<<st->blocks, C::threads, 0, stream>>>(a, st->flags);
    } else if (part >= C::ce_min_bytes) {
      handshake_kernel<<<1, 32, 0, stream>>>(st->flags, detail::kExchangeCeStart, epoch);
      MGK_LAUNCH_CHECK(ctx);
      MGK_CUDA_TRY(ctx, ce_begin(&st->ce, stream));
      for (int k = 1; k <= world; ++k) {  // peers first, my own y last
        const int p = (me + k) % world;
        char* dst = static_cast<char*>(y->host_peers[p]) + me * part;
        MGK_CUDA_TRY(ctx, ce_add(&st->ce, stream, dst, a.x + (gather ? 0 : p * part), part));
      }
      MGK_CUDA_TRY(ctx, ce_end(&st->ce, stream));
      handshake_kernel<<<1, 32, 0, stream>>>(st->flags, detail::kExchangeCeEnd, epoch);
    } else {
      sym_view<char> yv;
      if (view_of(ctx, *y, &yv) != 0) return 1;
      exchange_push<L, C><<<st->blocks, C::threads, 0, stream>>>(a.x, yv, int64_t(part), st->flags, epoch);
    }
    MGK_LAUNCH_CHECK(ctx);
    return 0;
  }

  static void teardown(mgk_ctx* ctx) { delete_collective_state(ctx); }
};

}  // namespace mgk::prim
