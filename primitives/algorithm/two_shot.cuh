// The two-shot reduction, for every block of a kernel's grid: each rank owns a part of the
// vector, pulls that part from every rank's x, sums it (fp32, one rounding), and stores the
// sum where the layout says: into every rank's y (all-reduce: reduce-scatter and all-gather
// fused), into its own y (reduce-scatter: the second shot is empty), or into the root's y
// (reduce: reduce-scatter fused with a gather). Between a start handshake (every x is ready,
// the y written may be written) and an end handshake (every read of x and write of y is done
// before any rank returns). Each rank moves 2(W-1)/W of the data instead of a one-shot's
// W-1: the large-message choice when W > 2.
#pragma once
#include <type_traits>

#include "../math/block_reduce.cuh"
#include "../sync/peer_signals.cuh"

namespace mgk::prim {

// Which part a rank sums and where the sum goes:
//   all_reduce:     n elements; rank r sums the r-th of W 16-byte aligned parts into every y;
//   reduce_scatter: W chunks of n elements; rank r sums chunk r into its own y;
//   reduce:         as all_reduce, into the root's y only.
enum class two_shot_layout { all_reduce, reduce_scatter, reduce };

// What a kernel gets as y: every rank's (all-reduce), else one pointer (mine, or the root's
// through its host_peers entry).
template <two_shot_layout L, class T>
using two_shot_out = std::conditional_t<L == two_shot_layout::all_reduce, sym_view<T>, T*>;

namespace detail {
template <two_shot_layout L>
MGK_DEV const char* two_shot_what(bool start) {
  if constexpr (L == two_shot_layout::all_reduce) return start ? "all_reduce two-shot: start" : "all_reduce two-shot: end";
  if constexpr (L == two_shot_layout::reduce_scatter) return start ? "reduce_scatter pull: start" : "reduce_scatter pull: end";
  if constexpr (L == two_shot_layout::reduce) return start ? "reduce: start" : "reduce: end";
}
}  // namespace detail

// T = bf16 or float; x symmetric; `start`, `end`: flag regions of `flags` of their own (pair
// blockIdx.x). Every block of every rank calls it, with the same grid on every rank.
template <two_shot_layout L, class T, int Unroll>
MGK_DEV void two_shot(const sym_view<T>& x, const two_shot_out<L, T>& y, int64_t n, const block_flags& flags,
                      int start, int end, uint64_t epoch) {
  const int me = x.rank, world = x.world;
  constexpr int64_t kLanes = 16 / sizeof(T);
  __shared__ const T* srcs[MGK_MAX_WORLD];
  if constexpr (L == two_shot_layout::reduce_scatter) {
    const span part = split_aligned(n, gridDim.x, blockIdx.x, kLanes);
    block_handshake(flags.slots(start, blockIdx.x), epoch, detail::two_shot_what<L>(true));
    for (int s = threadIdx.x; s < world; s += blockDim.x) srcs[s] = x.peer(s) + me * n + part.begin;
    __syncthreads();
    block_reduce<T, Unroll>(y + part.begin, srcs, world, part.size());
  } else {
    const span seg = split_aligned(n, world, me, kLanes);  // the segment I own
    const span sub = split_aligned(seg.size(), gridDim.x, blockIdx.x, kLanes);
    const int64_t first = seg.begin + sub.begin;
    block_handshake(flags.slots(start, blockIdx.x), epoch, detail::two_shot_what<L>(true));
    if constexpr (L == two_shot_layout::all_reduce) {
      __shared__ T* dsts[MGK_MAX_WORLD];
      for (int r = threadIdx.x; r < world; r += blockDim.x) {
        srcs[r] = x.peer(r) + first;
        dsts[r] = y.peer(r) + first;
      }
      __syncthreads();
      block_reduce<T, Unroll>(dsts, world, srcs, world, sub.size());
    } else {
      for (int r = threadIdx.x; r < world; r += blockDim.x) srcs[r] = x.peer(r) + first;
      __syncthreads();
      block_reduce<T, Unroll>(y + first, srcs, world, sub.size());
    }
  }
  block_handshake(flags.slots(end, blockIdx.x), epoch, detail::two_shot_what<L>(false));
}

}  // namespace mgk::prim
