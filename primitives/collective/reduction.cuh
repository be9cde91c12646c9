// All-reduce and reduce-scatter as one template over the layout (algorithm/two_shot.cuh's
// two_shot_layout::all_reduce or ::reduce_scatter), bf16 or fp32 summed in fp32. Three
// ways, chosen per call by the size of what each rank receives:
//   * Lamport one-shot (a multiple of 16 bytes, <= one_shot_max_bytes; with two ranks and
//     one_shot_w2 at every size): no sync at all (protocol/lamport_slots.cuh);
//   * flagged one-shot (<= one_shot_max_bytes): one signal per block pair;
//   * two-shot (larger): a start and an end handshake; 2(W-1)/W of the data per rank.
// One-shot slots are double-buffered by epoch parity, so no start barrier is needed: a
// rank runs at most one call ahead of a peer (it waited for that peer's data of the
// previous call). With two ranks a one-shot moves exactly the bytes a two-shot does and
// needs no handshake, hence one_shot_w2; its slots then cost 5 x N x elt bytes per rank
// (2 parities x 2 sources x N elements + a 4-byte escape flag per 16 bytes).
//
// Config C: int threads, unroll, blocks (0: one per SM), lamport_lag; size_t
// one_shot_max_bytes; bool one_shot_w2, lamport. Block b of every rank pairs with block b
// of every other (the grid is agreed at setup).
#pragma once
#include "../algorithm/one_shot.cuh"
#include "../algorithm/two_shot.cuh"
#include "entry.cuh"

namespace mgk::prim {

namespace detail {
enum reduction_region { kReductionLanded, kReductionStart, kReductionEnd, kReductionEmptied, kReductionRegions };

template <two_shot_layout L, class P>
MGK_DEV const char* reduction_what() {
  constexpr bool all = L == two_shot_layout::all_reduce;
  if constexpr (P::whole_vectors)
    return all ? "all_reduce lamport: the peers' data" : "reduce_scatter lamport: the peers' data";
  else
    return all ? "all_reduce one-shot: the peers' data" : "reduce_scatter one-shot: the peers' data";
}
}  // namespace detail

template <two_shot_layout L, class C, class P, class T>
__global__ void __launch_bounds__(C::threads) reduction_one_shot(one_shot_args a, block_flags flags) {
  one_shot_reduce<P, T, C::unroll, C::lamport_lag>(a, flags.slots(detail::kReductionLanded, blockIdx.x),
                                                   detail::reduction_what<L, P>());
}

template <two_shot_layout L, class C, class T>
__global__ void __launch_bounds__(C::threads)
    reduction_two_shot(sym_view<T> x, two_shot_out<L, T> y, int64_t n, block_flags flags, uint64_t epoch) {
  two_shot<L, T, C::unroll>(x, y, n, flags, detail::kReductionStart, detail::kReductionEnd, epoch);
}

template <two_shot_layout L, class C>
struct reduction {
  static_assert(L != two_shot_layout::reduce, "a reduce to the root is rooted_reduce (collective/rooted.cuh)");
  static constexpr bool all = L == two_shot_layout::all_reduce;
  static constexpr const char* name = all ? "all_reduce" : "reduce_scatter";

  static int setup(mgk_ctx* ctx) {
    int64_t n;  // elements each rank receives
    size_t elt;
    if (setup_collective<C>(ctx, all ? "N" : "C", detail::kReductionRegions, &n, &elt,
                            reduction_one_shot<L, C, lamport, __nv_bfloat16>, reduction_one_shot<L, C, lamport, float>,
                            reduction_one_shot<L, C, flagged, __nv_bfloat16>, reduction_one_shot<L, C, flagged, float>,
                            reduction_two_shot<L, C, __nv_bfloat16>, reduction_two_shot<L, C, float>) != 0)
      return 1;
    const bool any_size = C::one_shot_w2 && C::lamport && ctx->world_size == 2;
    const size_t limit = any_size ? SIZE_MAX : C::one_shot_max_bytes;
    return state_of(ctx).landing.alloc(ctx, landing_slot_bytes(n, elt, limit));
  }

  static int run(mgk_ctx* ctx, const mgk_tensor* in, int n_in, const mgk_tensor* out, int n_out,
                 cudaStream_t stream) {
    return run_summing(ctx, name, in, n_in, out, n_out, [&]<class T>(const mgk_tensor& x, const mgk_tensor& y) {
      return launch<T>(ctx, state_of(ctx), x, y, stream);
    });
  }

  static void teardown(mgk_ctx* ctx) { delete_collective_state(ctx); }

 private:
  template <class P, class T>
  static int one_shot(mgk_ctx* ctx, collective_state& st, one_shot_args a, cudaStream_t stream) {
    MGK_CUDA_TRY(ctx, st.landing.slots_for<P>(st.flags, detail::kReductionEmptied, a.epoch, stream, &a.landing));
    reduction_one_shot<L, C, P, T><<<st.blocks, C::threads, 0, stream>>>(a, st.flags);
    MGK_LAUNCH_CHECK(ctx);
    return 0;
  }

  template <class T>
  static int launch(mgk_ctx* ctx, collective_state& st, const mgk_tensor& x, const mgk_tensor& y, cudaStream_t stream) {
    const uint64_t epoch = st.epoch.next();
    const size_t bytes = mgk::nbytes(all ? x : y);  // reduce-scatter: rank r gets chunk r of every x
    const one_shot_args a{static_cast<const char*>(x.data), all ? 0 : bytes, static_cast<char*>(y.data), 0, bytes, {},
                          epoch};
    const bool fits = bytes <= st.landing.capacity(), small = bytes <= C::one_shot_max_bytes;
    if (fits && C::lamport && bytes % 16 == 0 && (small || (C::one_shot_w2 && ctx->world_size == 2)))
      return one_shot<lamport, T>(ctx, st, a, stream);
    if (fits && small) return one_shot<flagged, T>(ctx, st, a, stream);
    sym_view<T> xv;
    if (view_of(ctx, x, &xv) != 0) return 1;
    if constexpr (all) {
      sym_view<T> yv;
      if (view_of(ctx, y, &yv) != 0) return 1;
      reduction_two_shot<L, C, T><<<st.blocks, C::threads, 0, stream>>>(xv, yv, x.numel, st.flags, epoch);
    } else {
      reduction_two_shot<L, C, T><<<st.blocks, C::threads, 0, stream>>>(xv, static_cast<T*>(y.data), y.numel, st.flags,
                                                                        epoch);
    }
    MGK_LAUNCH_CHECK(ctx);
    return 0;
  }
};

}  // namespace mgk::prim
