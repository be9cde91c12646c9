// Expert reduce-scatter on the mgk primitives: y_r[i] = sum over s of x_s[r*C + i]
// (bf16 or fp32, summed in fp32). Two algorithms, chosen by the size of one chunk:
//  * one-shot push (C * elt <= ONE_SHOT_MAX_KB): each rank stores chunk p of its x into a
//    landing slot on rank p, signals once, and sums its own chunk with the landed ones.
//    Slots are double-buffered by epoch parity, so no start barrier is needed (a rank runs
//    at most one call ahead of a peer: it waited for that peer's data of the previous
//    call). One sync per call. When a chunk fills whole 16-byte vectors (LAMPORT=1) there
//    is no sync at all: the slots start "empty" and the receiver sees each vector
//    land (transfer/flagless_push.cuh).
//    With two ranks (ONE_SHOT_W2=1) the one-shot moves exactly the bytes the pull does
//    (C per direction) and needs no handshake, so it runs at every size, on Lamport slots
//    (the sums trail the sends, so local work overlaps the link). The slots then cost
//    5 x C x elt bytes per rank (2 parities x 2 sources x C elements + a 4-byte escape
//    flag per 16 bytes): 10C for bf16.
//  * pull (larger): after a start handshake, each rank loads its chunk from every rank's x
//    and sums it into y; an end handshake keeps every x alive until its readers are done.
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
__global__ void __launch_bounds__(THREADS) reduce_scatter_lamport(prim::one_shot_args a) {
  prim::lamport_reduce<T, UNROLL, LAMPORT_LAG>(a, "reduce_scatter lamport: the peers' data");
}

template <class T>
__global__ void __launch_bounds__(THREADS) reduce_scatter_one_shot(prim::one_shot_args a, prim::block_flags flags) {
  prim::flagged_reduce<T, UNROLL>(a, flags.slots(kLanded, blockIdx.x), "reduce_scatter one-shot: the peers' data");
}

template <class T>
__global__ void __launch_bounds__(THREADS) reduce_scatter_pull(prim::sym_view<T> x, T* y, int64_t c,
                                                               prim::block_flags flags, uint64_t epoch) {
  const int me = x.rank, world = x.world;
  const prim::span part = prim::split_aligned(c, gridDim.x, blockIdx.x, 16 / sizeof(T));
  prim::block_handshake(flags.slots(kStart, blockIdx.x), epoch, "reduce_scatter pull: start");
  __shared__ const T* srcs[MGK_MAX_WORLD];
  for (int s = threadIdx.x; s < world; s += blockDim.x) srcs[s] = x.peer(s) + me * c + part.begin;
  __syncthreads();
  prim::block_reduce<T, UNROLL>(y + part.begin, srcs, world, part.size());
  prim::block_handshake(flags.slots(kEnd, blockIdx.x), epoch, "reduce_scatter pull: end");
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
  const size_t chunk = mgk::nbytes(y);  // rank r gets chunk r of every x
  prim::one_shot_args a{static_cast<const char*>(x.data), chunk, static_cast<char*>(y.data), 0, chunk, {}, epoch};
  const bool fits = chunk <= st.landing.capacity(), small = chunk <= size_t(ONE_SHOT_MAX_KB) * 1024;
  if (fits && LAMPORT && chunk % 16 == 0 && (small || (ONE_SHOT_W2 && ctx->world_size == 2))) {
    MGK_CUDA_TRY(ctx, st.landing.for_lamport(st.flags, kEmptied, epoch, stream, &a.landing));
    reduce_scatter_lamport<T><<<st.blocks, THREADS, 0, stream>>>(a);
  } else if (fits && small) {
    a.landing = st.landing.for_flagged();
    reduce_scatter_one_shot<T><<<st.blocks, THREADS, 0, stream>>>(a, st.flags);
  } else {
    prim::sym_view<T> xv;
    if (prim::view_of(ctx, x, &xv) != 0) return 1;
    reduce_scatter_pull<T><<<st.blocks, THREADS, 0, stream>>>(xv, static_cast<T*>(y.data), y.numel, st.flags, epoch);
  }
  MGK_LAUNCH_CHECK(ctx);
  return 0;
}

}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  const int64_t c = mgk::dim(ctx, "C");
  if (c < 0) return 1;
  const size_t elt = mgk::input_elem_bytes(ctx, "x");
  if (elt == 0) return 1;
  auto* st = new state;
  ctx->state = st;
  if (prim::setup_paired_grid(ctx, kRegions, THREADS, BLOCKS, &st->flags, &st->blocks,
                              reduce_scatter_lamport<__nv_bfloat16>, reduce_scatter_lamport<float>,
                              reduce_scatter_one_shot<__nv_bfloat16>, reduce_scatter_one_shot<float>,
                              reduce_scatter_pull<__nv_bfloat16>, reduce_scatter_pull<float>) != 0)
    return 1;
  const bool any_size = ONE_SHOT_W2 && LAMPORT && ctx->world_size == 2;
  const size_t limit = any_size ? SIZE_MAX : size_t(ONE_SHOT_MAX_KB) * 1024;
  return st->landing.alloc(ctx, prim::landing_slot_bytes(c, elt, limit));
}

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int n_in, const mgk_tensor* out, int n_out,
                       cudaStream_t stream) {
  auto* st = static_cast<state*>(ctx->state);
  const mgk_tensor* x = mgk::find(in, n_in, "x");
  const mgk_tensor* y = mgk::find(out, n_out, "y");
  if (!x || !y) return mgk::set_error(ctx, "reduce_scatter expects an input 'x' and an output 'y'");
  if (x->dtype == MGK_BF16) return launch<__nv_bfloat16>(ctx, *st, *x, *y, stream);
  if (x->dtype == MGK_F32) return launch<float>(ctx, *st, *x, *y, stream);
  return mgk::set_error(ctx, "reduce_scatter: dtype %d is not supported (bf16 and f32 are)", int(x->dtype));
}

MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) {
  delete static_cast<state*>(ctx->state);
  ctx->state = nullptr;
}
