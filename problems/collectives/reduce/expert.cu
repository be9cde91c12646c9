// Expert reduce on the mgk primitives: y_0 = sum over ranks of x (root 0; the other
// ranks' y is empty, though symmetric). bf16 or fp32, summed in fp32. Two algorithms:
//  * Lamport (bytes a multiple of 16, <= LAMPORT_MAX_KB): every rank pushes x into its
//    landing slot on the root, which needs no signal (transfer/flagless_push.cuh); the
//    root sums its x with what lands. Credits keep a rank from running two calls ahead.
//  * reduce-scatter fused with a gather to the root (larger): rank r owns 1/W of the
//    vector, pulls that segment from every rank, sums it, and stores the sum into the
//    root's y. Every GPU sums a share in parallel, and the root receives 2(W-1)/W of the
//    data instead of (W-1) times it. A start handshake (every x is ready, the root's y may
//    be written) and an end handshake (every read of x and write into y_0 is done before
//    anyone returns).
// Block b of every rank pairs with block b of every other rank (grid agreed at setup).
#include "mgk_primitives.cuh"

namespace prim = mgk::prim;

// mgk:tune BLOCKS 0 32 66 264
#ifndef BLOCKS
#define BLOCKS 0  // 0: one block per SM
#endif
// mgk:tune THREADS 256 512 1024
#ifndef THREADS
#define THREADS 512
#endif
// mgk:tune UNROLL 1 2 4
#ifndef UNROLL
#define UNROLL 4
#endif
// mgk:tune LAMPORT_MAX_KB 0 256 1024 4096 16384
#ifndef LAMPORT_MAX_KB
#define LAMPORT_MAX_KB 1024
#endif
// mgk:tune LAMPORT_LAG 1 2 4
#ifndef LAMPORT_LAG
#define LAMPORT_LAG 1  // the sums trail the sends by this many steps
#endif

namespace {

enum region { kStart, kEnd, kCredit, kEmptied, kRegions };
constexpr int kRoot = 0;

template <class T>
__global__ void __launch_bounds__(THREADS) reduce_lamport(prim::one_shot_args a, prim::block_flags flags) {
  const auto credits = flags.slots(kCredit, blockIdx.x);
  prim::lamport_reduce_to_root<T, UNROLL, LAMPORT_LAG>(a, kRoot, credits, "reduce lamport: the ranks' data");
}

template <class T>
__global__ void __launch_bounds__(THREADS) reduce_pull_to_root(prim::sym_view<T> x, T* y_root, int64_t n,
                                                               prim::block_flags flags, uint64_t epoch) {
  const int me = x.rank, world = x.world;
  constexpr int64_t kLanes = 16 / sizeof(T);
  const prim::span seg = prim::split_aligned(n, world, me, kLanes);  // the segment I sum
  const prim::span sub = prim::split_aligned(seg.size(), gridDim.x, blockIdx.x, kLanes);
  const int64_t first = seg.begin + sub.begin;
  prim::block_handshake(flags.slots(kStart, blockIdx.x), epoch, "reduce: start");
  __shared__ const T* srcs[MGK_MAX_WORLD];
  for (int r = threadIdx.x; r < world; r += blockDim.x) srcs[r] = x.peer(r) + first;
  __syncthreads();
  prim::block_reduce<T, UNROLL>(y_root + first, srcs, world, sub.size());
  prim::block_handshake(flags.slots(kEnd, blockIdx.x), epoch, "reduce: end");
}

struct state {
  prim::landing_memory landing;
  prim::block_flags flags{};
  prim::epoch_counter epoch;
  int blocks = 0;
};

template <class T>
int launch(mgk_ctx* ctx, state& st, const mgk_tensor& x, const mgk_tensor& y, cudaStream_t stream) {
  const uint64_t epoch = st.epoch.next();
  const size_t bytes = mgk::nbytes(x);
  if (bytes % 16 == 0 && bytes <= st.landing.capacity() && bytes <= size_t(LAMPORT_MAX_KB) * 1024) {
    prim::one_shot_args a{static_cast<const char*>(x.data), 0, static_cast<char*>(y.data), 0, bytes, {}, epoch};
    MGK_CUDA_TRY(ctx, st.landing.for_lamport(st.flags, kEmptied, epoch, stream, &a.landing));
    reduce_lamport<T><<<st.blocks, THREADS, 0, stream>>>(a, st.flags);
  } else {
    prim::sym_view<T> xv;
    if (prim::view_of(ctx, x, &xv) != 0) return 1;
    if (!y.host_peers) return mgk::set_error(ctx, "reduce: the output 'y' must be symmetric (the root's is written)");
    T* y_root = static_cast<T*>(y.host_peers[kRoot]);
    reduce_pull_to_root<T><<<st.blocks, THREADS, 0, stream>>>(xv, y_root, x.numel, st.flags, epoch);
  }
  MGK_LAUNCH_CHECK(ctx);
  return 0;
}

}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  const int64_t n = mgk::dim(ctx, "N");
  if (n < 0) return 1;
  const size_t elt = mgk::input_elem_bytes(ctx, "x");
  if (elt == 0) return 1;
  auto* st = new state;
  ctx->state = st;
  if (prim::setup_paired_grid(ctx, kRegions, THREADS, BLOCKS, &st->flags, &st->blocks,
                              reduce_lamport<__nv_bfloat16>, reduce_lamport<float>,
                              reduce_pull_to_root<__nv_bfloat16>, reduce_pull_to_root<float>) != 0)
    return 1;
  return st->landing.alloc(ctx, prim::landing_slot_bytes(n, elt, size_t(LAMPORT_MAX_KB) * 1024));
}

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int n_in, const mgk_tensor* out, int n_out,
                       cudaStream_t stream) {
  auto* st = static_cast<state*>(ctx->state);
  const mgk_tensor* x = mgk::find(in, n_in, "x");
  const mgk_tensor* y = mgk::find(out, n_out, "y");
  if (!x || !y) return mgk::set_error(ctx, "reduce expects an input 'x' and an output 'y'");
  if (x->dtype == MGK_BF16) return launch<__nv_bfloat16>(ctx, *st, *x, *y, stream);
  if (x->dtype == MGK_F32) return launch<float>(ctx, *st, *x, *y, stream);
  return mgk::set_error(ctx, "reduce: dtype %d is not supported (bf16 and f32 are)", int(x->dtype));
}

MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) {
  delete static_cast<state*>(ctx->state);
  ctx->state = nullptr;
}
