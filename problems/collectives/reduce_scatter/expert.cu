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
//    (the sums trail the sends, so local work overlaps the link). The slots then cost 20C
//    bytes per rank (2 parities x 2 sources x C fp32-sized elements + escape flags).
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
constexpr int kMaxBlocks = 1024;

struct operands {
  prim::sym_view<char> x, y;     // x: [world * c], y: [c]
  prim::lamport_slots landing;   // [2 parities][world] slots (+ escape flags); one-shot only
  prim::block_flags flags;
  int64_t c;                     // elements per chunk
  uint64_t epoch;
};

template <class T>
__global__ void __launch_bounds__(THREADS) reduce_scatter_one_shot_push(operands o) {
  const int me = o.x.rank, world = o.x.world;
  const prim::span part = prim::split_aligned(o.c, gridDim.x, blockIdx.x, 16 / sizeof(T));
  const size_t off = part.begin * sizeof(T), len = part.size() * sizeof(T), chunk = o.c * sizeof(T);
  const size_t parity = o.epoch & 1;
  auto slot = [&](int src) { return (parity * world + src) * o.landing.slot_bytes + off; };
  for (int k = 1; k < world; ++k) {  // chunk p of my x into rank p's landing slot for me
    const int p = (me + k) % world;
    prim::block_copy<UNROLL>(o.landing.mem.peer(p) + slot(me), o.x.local + p * chunk + off, len);
  }
  const auto slots = o.flags.slots(kLanded, blockIdx.x);
  prim::block_signal(slots, o.epoch);
  prim::block_wait(slots, o.epoch, "reduce_scatter one-shot: waiting for the peers' data");
  __shared__ const T* srcs[MGK_MAX_WORLD];
  for (int s = threadIdx.x; s < world; s += blockDim.x)
    srcs[s] = reinterpret_cast<const T*>(s == me ? o.x.local + me * chunk + off : o.landing.mem.local + slot(s));
  __syncthreads();
  prim::block_reduce<T, UNROLL>(reinterpret_cast<T*>(o.y.local + off), srcs, world, part.size());
}

template <class T>
__global__ void __launch_bounds__(THREADS) reduce_scatter_one_shot_lamport(operands o) {
  const int me = o.x.rank, world = o.x.world;
  const size_t chunk = o.c * sizeof(T);
  __shared__ const char* send[MGK_MAX_WORLD];
  __shared__ prim::lamport_slot to_peer[MGK_MAX_WORLD], from_peer[MGK_MAX_WORLD];
  for (int r = threadIdx.x; r < world; r += blockDim.x) {
    send[r] = o.x.local + r * chunk;  // rank r gets chunk r of my x
    to_peer[r] = o.landing.outbox(r, o.epoch);
    from_peer[r] = o.landing.inbox(r, o.epoch);
  }
  __syncthreads();
  const prim::span vecs = prim::split_even(chunk / 16, gridDim.x, blockIdx.x);
  prim::block_lamport_reduce<T, UNROLL, LAMPORT_LAG>(vecs, send, to_peer, from_peer, o.y.local, prim::call_flag(o.epoch),
                                                     me, world, "reduce_scatter lamport: the peers' data");
}

template <class T>
__global__ void __launch_bounds__(THREADS) reduce_scatter_pull(operands o) {
  const int me = o.x.rank, world = o.x.world;
  const prim::span part = prim::split_aligned(o.c, gridDim.x, blockIdx.x, 16 / sizeof(T));
  prim::block_handshake(o.flags.slots(kStart, blockIdx.x), o.epoch, "reduce_scatter pull: start");
  __shared__ const T* srcs[MGK_MAX_WORLD];
  for (int s = threadIdx.x; s < world; s += blockDim.x)
    srcs[s] = reinterpret_cast<const T*>(o.x.peer(s)) + me * o.c + part.begin;
  __syncthreads();
  prim::block_reduce<T, UNROLL>(reinterpret_cast<T*>(o.y.local) + part.begin, srcs, world, part.size());
  prim::block_handshake(o.flags.slots(kEnd, blockIdx.x), o.epoch, "reduce_scatter pull: end");
}

struct state {
  mgk_sym_buffer flag_buf{}, landing_buf{};
  prim::lamport_slots landing{};
  prim::block_flags flags{};
  prim::epoch_counter epoch;
  int blocks = 0;
  bool emptied = false;  // the Lamport slots hold "empty" (lamport_empty_slots)
};

enum class path { lamport, one_shot, pull };

template <class T>
int launch(mgk_ctx* ctx, state& st, const operands& o, path how, cudaStream_t stream) {
  if (how == path::lamport) {
    MGK_CUDA_TRY(ctx, prim::lamport_empty_slots(&st.emptied, o.landing, o.flags, kEmptied, o.epoch, stream));
    reduce_scatter_one_shot_lamport<T><<<st.blocks, THREADS, 0, stream>>>(o);
  } else if (how == path::one_shot)
    reduce_scatter_one_shot_push<T><<<st.blocks, THREADS, 0, stream>>>(o);
  else
    reduce_scatter_pull<T><<<st.blocks, THREADS, 0, stream>>>(o);
  if (how == path::one_shot) st.emptied = false;  // it leaves data in the slots
  MGK_LAUNCH_CHECK(ctx);
  return 0;
}

}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  const int64_t c = mgk::dim(ctx, "C");
  if (c < 0) return 1;
  auto* st = new state;
  ctx->state = st;
  int fit = ctx->num_sms, f = 0;
  for (auto kernel : {reduce_scatter_one_shot_push<__nv_bfloat16>, reduce_scatter_one_shot_push<float>,
                      reduce_scatter_one_shot_lamport<__nv_bfloat16>, reduce_scatter_one_shot_lamport<float>,
                      reduce_scatter_pull<__nv_bfloat16>, reduce_scatter_pull<float>}) {
    if (prim::resident_blocks(ctx, kernel, THREADS, 0, &f) != 0) return 1;
    fit = f < fit ? f : fit;
  }
  const int want = BLOCKS > 0 && BLOCKS < fit ? BLOCKS : fit;
  if (prim::setup_block_flags(ctx, kRegions, kMaxBlocks, want, &st->flag_buf, &st->flags, &st->blocks) != 0)
    return 1;
  const bool any_size = ONE_SHOT_W2 && LAMPORT && ctx->world_size == 2;
  const size_t slot_bytes = prim::landing_slot_bytes(c, any_size ? SIZE_MAX : size_t(ONE_SHOT_MAX_KB) * 1024);
  if (slot_bytes > 0 && prim::lamport_alloc(ctx, slot_bytes, &st->landing_buf, &st->landing) != 0) return 1;
  return 0;
}

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int n_in, const mgk_tensor* out, int n_out,
                       cudaStream_t stream) {
  auto* st = static_cast<state*>(ctx->state);
  const mgk_tensor* x = mgk::find(in, n_in, "x");
  const mgk_tensor* y = mgk::find(out, n_out, "y");
  if (!x || !y) return mgk::set_error(ctx, "reduce_scatter expects an input 'x' and an output 'y'");
  operands o{};
  if (prim::view_of(ctx, *x, &o.x) != 0 || prim::view_of(ctx, *y, &o.y) != 0) return 1;
  o.landing = st->landing;
  o.flags = st->flags;
  o.c = y->numel;
  const size_t chunk = mgk::nbytes(*y);
  path how = path::pull;
  if (chunk <= st->landing.slot_bytes) {
    const bool small = chunk <= size_t(ONE_SHOT_MAX_KB) * 1024;
    if (LAMPORT && chunk % 16 == 0 && (small || (ONE_SHOT_W2 && ctx->world_size == 2)))
      how = path::lamport;
    else if (small)
      how = path::one_shot;
  }
  if (x->dtype != MGK_BF16 && x->dtype != MGK_F32)
    return mgk::set_error(ctx, "reduce_scatter: dtype %d is not supported (bf16 and f32 are)", int(x->dtype));
  o.epoch = st->epoch.next();
  return x->dtype == MGK_BF16 ? launch<__nv_bfloat16>(ctx, *st, o, how, stream)
                              : launch<float>(ctx, *st, o, how, stream);
}

MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) {
  delete static_cast<state*>(ctx->state);
  ctx->state = nullptr;
}
