// The rooted collectives, root 0: broadcast, scatter and gather as one template over the
// layout (algorithm/rooted_copy.cuh's rooted_layout), and reduce (rooted_reduce).
//
// rooted_copy_collective (bytes: any dtype). Three ways, by what each rank receives
// (broadcast, scatter) or sends (gather):
//   * Lamport one-shot (a multiple of 16 bytes, <= lamport_max_bytes): the data goes into
//     the receivers' landing slots with no signal; credits keep a rank that only sends from
//     running two calls ahead (protocol/credits.cuh);
//   * copy engine (>= ce_min_bytes): the same copy as cudaMemcpyAsync between two one-block
//     handshake kernels;
//   * rooted copy (otherwise), per block pair: START from the root, every rank copies its
//     part (pulls from the root's x, or pushes into the root's y: every GPU's SMs work at
//     once), END to the root; register transfers or TMA (mech).
// Config C: int threads, unroll, blocks (0: one per SM), lamport_lag, mech; size_t
// lamport_max_bytes, ce_min_bytes.
//
// rooted_reduce (bf16 or fp32, summed in fp32). Two ways:
//   * Lamport one-shot to the root (as above), which sums its x with what lands;
//   * two-shot to the root (otherwise): every rank sums 1/W of the vector, pulled from every
//     x, into the root's y, so the root receives 2(W-1)/W of the data instead of W-1 times
//     it (algorithm/two_shot.cuh).
// Config C: int threads, unroll, blocks, lamport_lag; size_t lamport_max_bytes.
#pragma once
#include "../algorithm/one_shot.cuh"
#include "../algorithm/rooted_copy.cuh"
#include "../algorithm/two_shot.cuh"
#include "entry.cuh"

namespace mgk::prim {

constexpr int kCollectiveRoot = 0;

namespace detail {
enum rooted_region {
  kRootedStart, kRootedEnd, kRootedCeStart, kRootedCeEnd, kRootedCredit, kRootedEmptied, kRootedRegions
};
enum rooted_reduce_region { kReduceStart, kReduceEnd, kReduceCredit, kReduceEmptied, kReduceRegions };

template <rooted_layout L>
MGK_DEV const char* rooted_lamport_what() {
  if constexpr (L == rooted_layout::broadcast) return "broadcast lamport: the root's data";
  if constexpr (L == rooted_layout::scatter) return "scatter lamport: the root's data";
  if constexpr (L == rooted_layout::gather) return "gather lamport: the ranks' chunks";
}
}  // namespace detail

template <rooted_layout L, class C>
__global__ void __launch_bounds__(C::threads) rooted_one_shot(one_shot_args a, block_flags flags) {
  const auto credits = flags.slots(detail::kRootedCredit, blockIdx.x);
  constexpr flow f = L == rooted_layout::gather ? flow::to_root : flow::from_root;
  rooted_exchange<lamport, C::unroll, C::lamport_lag>(a, f, kCollectiveRoot, credits, detail::rooted_lamport_what<L>());
}

template <rooted_layout L, class C>
__global__ void __launch_bounds__(C::threads)
    rooted_copy_kernel(sym_view<char> x, sym_view<char> y, int64_t bytes, block_flags flags, uint64_t epoch) {
  rooted_copy<L, C::mech, C::unroll, kCollectiveRoot>(x, y, bytes, flags, detail::kRootedStart, detail::kRootedEnd,
                                                      epoch);
}

template <rooted_layout L, class C>
struct rooted_copy_collective {
  static constexpr const char* name =
      L == rooted_layout::broadcast ? "broadcast" : L == rooted_layout::scatter ? "scatter" : "gather";

  static int setup(mgk_ctx* ctx) {
    int64_t elems;  // what each rank receives (broadcast, scatter) or sends (gather)
    size_t elt;
    if (setup_collective<C>(ctx, L == rooted_layout::broadcast ? "N" : "C", detail::kRootedRegions, &elems, &elt,
                            rooted_one_shot<L, C>, rooted_copy_kernel<L, C>) != 0)
      return 1;
    return state_of(ctx).landing.alloc(ctx, landing_slot_bytes(elems, elt, C::lamport_max_bytes));
  }

  static int run(mgk_ctx* ctx, const mgk_tensor* in, int n_in, const mgk_tensor* out, int n_out,
                 cudaStream_t stream) {
    collective_state* st = &state_of(ctx);
    const mgk_tensor *x, *y;
    if (find_x_y(ctx, name, in, n_in, out, n_out, &x, &y) != 0) return 1;
    const uint64_t epoch = st->epoch.next();
    const size_t bytes = mgk::nbytes(L == rooted_layout::gather ? *x : *y);
    if (bytes % 16 == 0 && bytes <= st->landing.capacity() && bytes <= C::lamport_max_bytes) {
      one_shot_args a{static_cast<const char*>(x->data), L == rooted_layout::scatter ? bytes : 0,
                      static_cast<char*>(y->data), L == rooted_layout::gather ? bytes : 0, bytes, {}, epoch};
      MGK_CUDA_TRY(ctx, st->landing.slots_for<lamport>(st->flags, detail::kRootedEmptied, epoch, stream, &a.landing));
      rooted_one_shot<L, C><<<st->blocks, C::threads, 0, stream>>>(a, st->flags);
    } else if (bytes >= C::ce_min_bytes) {
      handshake_kernel<<<1, 32, 0, stream>>>(st->flags, detail::kRootedCeStart, epoch);
      MGK_LAUNCH_CHECK(ctx);
      if constexpr (L == rooted_layout::broadcast) {
        MGK_CUDA_TRY(ctx, ce_copy(y->data, x->host_peers[kCollectiveRoot], bytes, stream));
      } else if constexpr (L == rooted_layout::scatter) {
        const char* x_root = static_cast<const char*>(x->host_peers[kCollectiveRoot]);
        MGK_CUDA_TRY(ctx, ce_copy(y->data, x_root + ctx->rank * bytes, bytes, stream));
      } else {
        char* y_root = static_cast<char*>(y->host_peers[kCollectiveRoot]);
        MGK_CUDA_TRY(ctx, ce_copy(y_root + ctx->rank * bytes, x->data, bytes, stream));
      }
      handshake_kernel<<<1, 32, 0, stream>>>(st->flags, detail::kRootedCeEnd, epoch);
    } else {
      sym_view<char> xv, yv;
      if (view_of(ctx, *x, &xv) != 0 || view_of(ctx, *y, &yv) != 0) return 1;
      rooted_copy_kernel<L, C><<<st->blocks, C::threads, 0, stream>>>(xv, yv, int64_t(bytes), st->flags, epoch);
    }
    MGK_LAUNCH_CHECK(ctx);
    return 0;
  }

  static void teardown(mgk_ctx* ctx) { delete_collective_state(ctx); }
};

template <class C, class T>
__global__ void __launch_bounds__(C::threads) rooted_reduce_one_shot(one_shot_args a, block_flags flags) {
  const auto credits = flags.slots(detail::kReduceCredit, blockIdx.x);
  reduce_to_root<lamport, T, C::unroll, C::lamport_lag>(a, kCollectiveRoot, credits, "reduce lamport: the ranks' data");
}

template <class C, class T>
__global__ void __launch_bounds__(C::threads)
    rooted_reduce_two_shot(sym_view<T> x, T* y_root, int64_t n, block_flags flags, uint64_t epoch) {
  two_shot<two_shot_layout::reduce, T, C::unroll>(x, y_root, n, flags, detail::kReduceStart, detail::kReduceEnd, epoch);
}

template <class C>
struct rooted_reduce {
  static constexpr const char* name = "reduce";

  static int setup(mgk_ctx* ctx) {
    int64_t n;
    size_t elt;
    if (setup_collective<C>(ctx, "N", detail::kReduceRegions, &n, &elt, rooted_reduce_one_shot<C, __nv_bfloat16>,
                            rooted_reduce_one_shot<C, float>, rooted_reduce_two_shot<C, __nv_bfloat16>,
                            rooted_reduce_two_shot<C, float>) != 0)
      return 1;
    return state_of(ctx).landing.alloc(ctx, landing_slot_bytes(n, elt, C::lamport_max_bytes));
  }

  static int run(mgk_ctx* ctx, const mgk_tensor* in, int n_in, const mgk_tensor* out, int n_out,
                 cudaStream_t stream) {
    return run_summing(ctx, name, in, n_in, out, n_out, [&]<class T>(const mgk_tensor& x, const mgk_tensor& y) {
      return launch<T>(ctx, state_of(ctx), x, y, stream);
    });
  }

  static void teardown(mgk_ctx* ctx) { delete_collective_state(ctx); }

 private:
  template <class T>
  static int launch(mgk_ctx* ctx, collective_state& st, const mgk_tensor& x, const mgk_tensor& y, cudaStream_t stream) {
    const uint64_t epoch = st.epoch.next();
    const size_t bytes = mgk::nbytes(x);
    if (bytes % 16 == 0 && bytes <= st.landing.capacity() && bytes <= C::lamport_max_bytes) {
      one_shot_args a{static_cast<const char*>(x.data), 0, static_cast<char*>(y.data), 0, bytes, {}, epoch};
      MGK_CUDA_TRY(ctx, st.landing.slots_for<lamport>(st.flags, detail::kReduceEmptied, epoch, stream, &a.landing));
      rooted_reduce_one_shot<C, T><<<st.blocks, C::threads, 0, stream>>>(a, st.flags);
    } else {
      sym_view<T> xv;
      if (view_of(ctx, x, &xv) != 0) return 1;
      if (!y.host_peers) return mgk::set_error(ctx, "reduce: the output 'y' must be symmetric (the root's is written)");
      T* y_root = static_cast<T*>(y.host_peers[kCollectiveRoot]);
      rooted_reduce_two_shot<C, T><<<st.blocks, C::threads, 0, stream>>>(xv, y_root, x.numel, st.flags, epoch);
    }
    MGK_LAUNCH_CHECK(ctx);
    return 0;
  }
};

}  // namespace mgk::prim
