// Expert all-reduce on the mgk primitives: y = sum over ranks of x (bf16 or fp32, summed
// in fp32). Two algorithms, chosen by message size:
//  * one-shot push (bytes <= ONE_SHOT_MAX_KB): each rank stores its x into a landing slot
//    on every peer, signals once, and sums x with the landed copies locally. Slots are
//    double-buffered by epoch parity, so no start barrier is needed: a rank can run at
//    most one call ahead of a peer (it waited for that peer's data of the previous call),
//    and the parity it writes was last read two calls ago. One sync per call. When n fills
//    whole 16-byte vectors (LAMPORT=1) there is no sync at all: the slots start "empty"
//    and the receiver sees each vector land (transfer/flagless_push.cuh).
//    With two ranks (ONE_SHOT_W2=1) the one-shot moves exactly the bytes the two-shot does
//    (N per direction) and needs no handshake, so it runs at every size, on Lamport slots
//    (the sums trail the sends, so local work overlaps the link). The slots then cost
//    5 x N x elt bytes per rank (2 parities x 2 sources x N elements + a 4-byte escape
//    flag per 16 bytes): 10N for bf16.
//  * two-shot, fused (larger): rank r owns 1/W of the vector, pulls that segment from
//    every rank, sums it, and stores the sum into every rank's y. A start handshake (the
//    peers' x is ready and their y may be written) and an end handshake (my reads of x_p
//    and writes to y_p are done before p returns). Moves 2(W-1)/W of the data per rank.
// Block b of every rank pairs with block b of every other rank; the grid size is agreed
// at setup so the pairing holds.
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
// mgk:tune ONE_SHOT_MAX_KB 0 256 1024 2048 4096 8192
#ifndef ONE_SHOT_MAX_KB
#define ONE_SHOT_MAX_KB 2048
#endif
// mgk:tune ONE_SHOT_W2 0 1
#ifndef ONE_SHOT_W2
#define ONE_SHOT_W2 1  // two ranks: one-shot at every size (see the top comment)
#endif
// mgk:tune LAMPORT_LAG 1 2 4 8
#ifndef LAMPORT_LAG
#define LAMPORT_LAG 1  // the sums trail the sends by this many steps
#endif
// mgk:tune LAMPORT 0 1
#ifndef LAMPORT
#define LAMPORT 1
#endif

namespace {

enum region { kLanded, kStart, kEnd, kEmptied, kRegions };

template <class T>
__global__ void __launch_bounds__(THREADS) all_reduce_lamport(prim::one_shot_args a) {
  prim::lamport_reduce<T, UNROLL, LAMPORT_LAG>(a, "all_reduce lamport: the peers' data");
}

template <class T>
__global__ void __launch_bounds__(THREADS) all_reduce_one_shot(prim::one_shot_args a, prim::block_flags flags) {
  prim::flagged_reduce<T, UNROLL>(a, flags.slots(kLanded, blockIdx.x), "all_reduce one-shot: the peers' data");
}

template <class T>
__global__ void __launch_bounds__(THREADS) all_reduce_two_shot(prim::sym_view<T> x, prim::sym_view<T> y, int64_t n,
                                                               prim::block_flags flags, uint64_t epoch) {
  const int me = x.rank, world = x.world;
  constexpr int64_t kLanes = 16 / sizeof(T);
  const prim::span seg = prim::split_aligned(n, world, me, kLanes);  // the segment I own
  const prim::span sub = prim::split_aligned(seg.size(), gridDim.x, blockIdx.x, kLanes);
  const int64_t first = seg.begin + sub.begin;
  prim::block_handshake(flags.slots(kStart, blockIdx.x), epoch, "all_reduce two-shot: start");
  __shared__ const T* srcs[MGK_MAX_WORLD];
  __shared__ T* dsts[MGK_MAX_WORLD];
  for (int r = threadIdx.x; r < world; r += blockDim.x) {
    srcs[r] = x.peer(r) + first;
    dsts[r] = y.peer(r) + first;
  }
  __syncthreads();
  prim::block_reduce<T, UNROLL>(dsts, world, srcs, world, sub.size());
  prim::block_handshake(flags.slots(kEnd, blockIdx.x), epoch, "all_reduce two-shot: end");
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
  prim::one_shot_args a{static_cast<const char*>(x.data), 0, static_cast<char*>(y.data), 0, bytes, {}, epoch};
  const bool fits = bytes <= st.landing.capacity(), small = bytes <= size_t(ONE_SHOT_MAX_KB) * 1024;
  if (fits && LAMPORT && bytes % 16 == 0 && (small || (ONE_SHOT_W2 && ctx->world_size == 2))) {
    MGK_CUDA_TRY(ctx, st.landing.for_lamport(st.flags, kEmptied, epoch, stream, &a.landing));
    all_reduce_lamport<T><<<st.blocks, THREADS, 0, stream>>>(a);
  } else if (fits && small) {
    a.landing = st.landing.for_flagged();
    all_reduce_one_shot<T><<<st.blocks, THREADS, 0, stream>>>(a, st.flags);
  } else {
    prim::sym_view<T> xv, yv;
    if (prim::view_of(ctx, x, &xv) != 0 || prim::view_of(ctx, y, &yv) != 0) return 1;
    all_reduce_two_shot<T><<<st.blocks, THREADS, 0, stream>>>(xv, yv, x.numel, st.flags, epoch);
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
                              all_reduce_lamport<__nv_bfloat16>, all_reduce_lamport<float>,
                              all_reduce_one_shot<__nv_bfloat16>, all_reduce_one_shot<float>,
                              all_reduce_two_shot<__nv_bfloat16>, all_reduce_two_shot<float>) != 0)
    return 1;
  const bool any_size = ONE_SHOT_W2 && LAMPORT && ctx->world_size == 2;
  const size_t limit = any_size ? SIZE_MAX : size_t(ONE_SHOT_MAX_KB) * 1024;
  return st->landing.alloc(ctx, prim::landing_slot_bytes(n, elt, limit));
}

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int n_in, const mgk_tensor* out, int n_out,
                       cudaStream_t stream) {
  auto* st = static_cast<state*>(ctx->state);
  const mgk_tensor* x = mgk::find(in, n_in, "x");
  const mgk_tensor* y = mgk::find(out, n_out, "y");
  if (!x || !y) return mgk::set_error(ctx, "all_reduce expects an input 'x' and an output 'y'");
  if (x->dtype == MGK_BF16) return launch<__nv_bfloat16>(ctx, *st, *x, *y, stream);
  if (x->dtype == MGK_F32) return launch<float>(ctx, *st, *x, *y, stream);
  return mgk::set_error(ctx, "all_reduce: dtype %d is not supported (bf16 and f32 are)", int(x->dtype));
}

MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) {
  delete static_cast<state*>(ctx->state);
  ctx->state = nullptr;
}
