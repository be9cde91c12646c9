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
//    (the sums trail the sends, so local work overlaps the link). The slots then cost 20N
//    bytes per rank (2 parities x 2 sources x N fp32-sized elements + escape flags).
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
constexpr int kMaxBlocks = 1024;

struct operands {
  prim::sym_view<char> x, y;
  prim::lamport_slots landing;   // [2 parities][world] slots (+ escape flags); one-shot only
  prim::block_flags flags;
  int64_t n;                     // elements per rank
  uint64_t epoch;
};

template <class T>
__global__ void __launch_bounds__(THREADS) all_reduce_one_shot_push(operands o) {
  const int me = o.x.rank, world = o.x.world;
  const prim::span part = prim::split_aligned(o.n, gridDim.x, blockIdx.x, 16 / sizeof(T));
  const size_t off = part.begin * sizeof(T), len = part.size() * sizeof(T);
  const size_t parity = o.epoch & 1;
  auto slot = [&](int src) { return (parity * world + src) * o.landing.slot_bytes + off; };
  for (int k = 1; k < world; ++k)  // my part into every peer's landing slot for me
    prim::block_copy<UNROLL>(o.landing.mem.peer((me + k) % world) + slot(me), o.x.local + off, len);
  const auto slots = o.flags.slots(kLanded, blockIdx.x);
  prim::block_signal(slots, o.epoch);
  prim::block_wait(slots, o.epoch, "all_reduce one-shot: waiting for the peers' data");
  __shared__ const T* srcs[MGK_MAX_WORLD];
  for (int s = threadIdx.x; s < world; s += blockDim.x)
    srcs[s] = reinterpret_cast<const T*>(s == me ? o.x.local + off : o.landing.mem.local + slot(s));
  __syncthreads();
  prim::block_reduce<T, UNROLL>(reinterpret_cast<T*>(o.y.local + off), srcs, world, part.size());
}

template <class T>
__global__ void __launch_bounds__(THREADS) all_reduce_one_shot_lamport(operands o) {
  const int me = o.x.rank, world = o.x.world;
  __shared__ const char* send[MGK_MAX_WORLD];
  __shared__ prim::lamport_slot to_peer[MGK_MAX_WORLD], from_peer[MGK_MAX_WORLD];
  for (int r = threadIdx.x; r < world; r += blockDim.x) {
    send[r] = o.x.local;  // every rank gets all of my x
    to_peer[r] = o.landing.outbox(r, o.epoch);
    from_peer[r] = o.landing.inbox(r, o.epoch);
  }
  __syncthreads();
  const prim::span vecs = prim::split_even(o.n * int64_t(sizeof(T)) / 16, gridDim.x, blockIdx.x);
  prim::block_lamport_reduce<T, UNROLL, LAMPORT_LAG>(vecs, send, to_peer, from_peer, o.y.local, prim::call_flag(o.epoch),
                                                     me, world, "all_reduce lamport: the peers' data");
}

template <class T>
__global__ void __launch_bounds__(THREADS) all_reduce_two_shot_pull_push(operands o) {
  const int me = o.x.rank, world = o.x.world;
  constexpr int64_t kLanes = 16 / sizeof(T);
  const prim::span seg = prim::split_aligned(o.n, world, me, kLanes);  // the segment I own
  const prim::span sub = prim::split_aligned(seg.size(), gridDim.x, blockIdx.x, kLanes);
  const int64_t first = seg.begin + sub.begin;
  prim::block_handshake(o.flags.slots(kStart, blockIdx.x), o.epoch, "all_reduce two-shot: start");
  __shared__ const T* srcs[MGK_MAX_WORLD];
  __shared__ T* dsts[MGK_MAX_WORLD];
  for (int r = threadIdx.x; r < world; r += blockDim.x) {
    srcs[r] = reinterpret_cast<const T*>(o.x.peer(r)) + first;
    dsts[r] = reinterpret_cast<T*>(o.y.peer(r)) + first;
  }
  __syncthreads();
  prim::block_reduce<T, UNROLL>(dsts, world, srcs, world, sub.size());
  prim::block_handshake(o.flags.slots(kEnd, blockIdx.x), o.epoch, "all_reduce two-shot: end");
}

struct state {
  mgk_sym_buffer flag_buf{}, landing_buf{};
  prim::lamport_slots landing{};
  prim::block_flags flags{};
  prim::epoch_counter epoch;
  int blocks = 0;
  bool emptied = false;  // the Lamport slots hold "empty" (lamport_empty_slots)
};

enum class path { lamport, one_shot, two_shot };

template <class T>
int launch(mgk_ctx* ctx, state& st, const operands& o, path how, cudaStream_t stream) {
  if (how == path::lamport) {
    MGK_CUDA_TRY(ctx, prim::lamport_empty_slots(&st.emptied, o.landing, o.flags, kEmptied, o.epoch, stream));
    all_reduce_one_shot_lamport<T><<<st.blocks, THREADS, 0, stream>>>(o);
  } else if (how == path::one_shot)
    all_reduce_one_shot_push<T><<<st.blocks, THREADS, 0, stream>>>(o);
  else
    all_reduce_two_shot_pull_push<T><<<st.blocks, THREADS, 0, stream>>>(o);
  if (how == path::one_shot) st.emptied = false;  // it leaves data in the slots
  MGK_LAUNCH_CHECK(ctx);
  return 0;
}

}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  const int64_t n = mgk::dim(ctx, "N");
  if (n < 0) return 1;
  auto* st = new state;
  ctx->state = st;
  int fit = ctx->num_sms, f = 0;
  for (auto kernel : {all_reduce_one_shot_push<__nv_bfloat16>, all_reduce_one_shot_push<float>,
                      all_reduce_one_shot_lamport<__nv_bfloat16>, all_reduce_one_shot_lamport<float>,
                      all_reduce_two_shot_pull_push<__nv_bfloat16>, all_reduce_two_shot_pull_push<float>}) {
    if (prim::resident_blocks(ctx, kernel, THREADS, 0, &f) != 0) return 1;
    fit = f < fit ? f : fit;
  }
  const int want = BLOCKS > 0 && BLOCKS < fit ? BLOCKS : fit;
  if (prim::setup_block_flags(ctx, kRegions, kMaxBlocks, want, &st->flag_buf, &st->flags, &st->blocks) != 0)
    return 1;
  const bool any_size = ONE_SHOT_W2 && LAMPORT && ctx->world_size == 2;
  const size_t slot_bytes = prim::landing_slot_bytes(n, any_size ? SIZE_MAX : size_t(ONE_SHOT_MAX_KB) * 1024);
  if (slot_bytes > 0 && prim::lamport_alloc(ctx, slot_bytes, &st->landing_buf, &st->landing) != 0) return 1;
  return 0;
}

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int n_in, const mgk_tensor* out, int n_out,
                       cudaStream_t stream) {
  auto* st = static_cast<state*>(ctx->state);
  const mgk_tensor* x = mgk::find(in, n_in, "x");
  const mgk_tensor* y = mgk::find(out, n_out, "y");
  if (!x || !y) return mgk::set_error(ctx, "all_reduce expects an input 'x' and an output 'y'");
  operands o{};
  if (prim::view_of(ctx, *x, &o.x) != 0 || prim::view_of(ctx, *y, &o.y) != 0) return 1;
  o.landing = st->landing;
  o.flags = st->flags;
  o.n = x->numel;
  const size_t bytes = mgk::nbytes(*x);
  path how = path::two_shot;
  if (bytes <= st->landing.slot_bytes) {
    const bool small = bytes <= size_t(ONE_SHOT_MAX_KB) * 1024;
    if (LAMPORT && bytes % 16 == 0 && (small || (ONE_SHOT_W2 && ctx->world_size == 2)))
      how = path::lamport;
    else if (small)
      how = path::one_shot;
  }
  if (x->dtype != MGK_BF16 && x->dtype != MGK_F32)
    return mgk::set_error(ctx, "all_reduce: dtype %d is not supported (bf16 and f32 are)", int(x->dtype));
  o.epoch = st->epoch.next();
  return x->dtype == MGK_BF16 ? launch<__nv_bfloat16>(ctx, *st, o, how, stream)
                              : launch<float>(ctx, *st, o, how, stream);
}

MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) {
  delete static_cast<state*>(ctx->state);
  ctx->state = nullptr;
}
