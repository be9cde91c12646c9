// Expert all-to-all on the mgk primitives: y_r[s*C + i] = x_s[r*C + i]. Pure data
// movement, so it works on bytes (any dtype). Four algorithms, chosen by the chunk size:
//  * one-shot push (C * elt <= ONE_SHOT_MAX_KB): each rank stores chunk p of its x into a
//    landing slot on rank p, signals once, and copies the landed chunks into y locally.
//    Slots are double-buffered by epoch parity, so no start barrier is needed (a rank runs
//    at most one call ahead of a peer). One sync per call.
//  * direct push (larger): after a start handshake (the peers' y may be written), each
//    rank stores chunk p of its x straight into rank p's y, by register stores or TMA bulk
//    copies (MECH), then an end handshake (all data into my y has landed).
//  * copy engine (chunks >= CE_MIN_MB): the same push issued as cudaMemcpyAsync between
//    two one-block handshake kernels, over CE_STREAMS side streams.
//  * Lamport one-shot (chunk bytes a multiple of 16, <= LAMPORT_MAX_KB; before all of the
//    above): the one-shot push into slots pre-filled with an "empty" word, so the receiver
//    sees each 16-byte vector land and needs no signal (transfer/flagless_push.cuh).
// Block b of every rank pairs with block b of every other rank (grid agreed at setup).
#include "mgk_primitives.cuh"

namespace prim = mgk::prim;

// mgk:tune BLOCKS 0 16 32 66 264
#ifndef BLOCKS
#define BLOCKS 0  // 0: one block per SM
#endif
// mgk:tune THREADS 256 512 1024
#ifndef THREADS
#define THREADS 512
#endif
// mgk:tune UNROLL 2 4 8
#ifndef UNROLL
#define UNROLL 4
#endif
// mgk:tune ONE_SHOT_MAX_KB 0 256 1024 2048 4096
#ifndef ONE_SHOT_MAX_KB
#define ONE_SHOT_MAX_KB 1024
#endif
// mgk:tune LAMPORT_MAX_KB 0 1024 4096 16384
#ifndef LAMPORT_MAX_KB
#define LAMPORT_MAX_KB 16384
#endif
// mgk:tune LAMPORT_LAG 1 2 4 8
#ifndef LAMPORT_LAG
#define LAMPORT_LAG 4  // the local copies trail the sends by this many steps
#endif
// mgk:tune MECH 0 1
#ifndef MECH
#define MECH 0  // direct push by 0: register stores, 1: TMA bulk copies
#endif
// mgk:tune CE_MIN_MB 16 64 256 1048576
#ifndef CE_MIN_MB
#define CE_MIN_MB 64  // 1048576: never use the copy engine
#endif
// mgk:tune CE_STREAMS 1 2 4
#ifndef CE_STREAMS
#define CE_STREAMS 2
#endif

namespace {

enum region { kLanded, kStart, kEnd, kCeStart, kCeEnd, kEmptied, kRegions };
constexpr int kMaxBlocks = 1024;

struct operands {
  prim::sym_view<char> x, y;     // x, y: [world * chunk] (bytes)
  prim::lamport_slots landing;   // [2 parities][world] slots (+ escape flags); one-shot only
  prim::block_flags flags;
  int64_t chunk;                 // bytes per (source, destination) pair
  uint64_t epoch;
};

__global__ void __launch_bounds__(THREADS) all_to_all_one_shot_push(operands o) {
  const int me = o.x.rank, world = o.x.world;
  const prim::span part = prim::split_aligned(o.chunk, gridDim.x, blockIdx.x, 16);
  const size_t parity = o.epoch & 1;
  auto slot = [&](int src) { return (parity * world + src) * o.landing.slot_bytes + part.begin; };
  for (int k = 1; k < world; ++k) {
    const int p = (me + k) % world;
    prim::block_copy<UNROLL>(o.landing.mem.peer(p) + slot(me), o.x.local + p * o.chunk + part.begin, part.size());
  }
  const auto slots = o.flags.slots(kLanded, blockIdx.x);
  prim::block_signal(slots, o.epoch);
  prim::block_copy<UNROLL>(o.y.local + me * o.chunk + part.begin, o.x.local + me * o.chunk + part.begin, part.size());
  prim::block_wait(slots, o.epoch, "all_to_all one-shot: waiting for the peers' data");
  for (int s = 0; s < world; ++s)
    if (s != me) prim::block_copy<UNROLL>(o.y.local + s * o.chunk + part.begin, o.landing.mem.local + slot(s), part.size());
}

__global__ void __launch_bounds__(THREADS) all_to_all_one_shot_lamport(operands o) {
  const int me = o.x.rank, world = o.x.world;
  __shared__ const char* send[MGK_MAX_WORLD];
  __shared__ char* recv[MGK_MAX_WORLD];
  __shared__ prim::lamport_slot to_peer[MGK_MAX_WORLD], from_peer[MGK_MAX_WORLD];
  for (int r = threadIdx.x; r < world; r += blockDim.x) {
    send[r] = o.x.local + r * o.chunk;  // rank r gets chunk r of my x
    recv[r] = o.y.local + r * o.chunk;
    to_peer[r] = o.landing.outbox(r, o.epoch);
    from_peer[r] = o.landing.inbox(r, o.epoch);
  }
  __syncthreads();
  const prim::span vecs = prim::split_even(o.chunk / 16, gridDim.x, blockIdx.x);
  prim::block_lamport_exchange<UNROLL, LAMPORT_LAG>(vecs, send, to_peer, from_peer, recv, prim::call_flag(o.epoch), me,
                                                    world, "all_to_all lamport: the peers' data");
}

__global__ void __launch_bounds__(THREADS) all_to_all_push(operands o) {
  const int me = o.x.rank, world = o.x.world;
  const prim::span part = prim::split_aligned(o.chunk, gridDim.x, blockIdx.x, 16);
  prim::block_mover<MECH, UNROLL> mover;
  mover.init("all_to_all push: TMA stage", me);
  prim::block_handshake(o.flags.slots(kStart, blockIdx.x), o.epoch, "all_to_all push: start");
  for (int k = 1; k <= world; ++k) {  // peers first (the link is the long pole), my own y last
    const int p = (me + k) % world;
    mover.copy(o.y.peer(p) + me * o.chunk + part.begin, o.x.local + p * o.chunk + part.begin, part.size());
  }
  mover.finish();
  prim::block_handshake(o.flags.slots(kEnd, blockIdx.x), o.epoch, "all_to_all push: end");
}

__global__ void all_to_all_ce_handshake(prim::block_flags flags, int region, uint64_t epoch) {
  prim::block_handshake(flags.slots(region, 0), epoch, "all_to_all copy engine: handshake");
}

struct state {
  mgk_sym_buffer flag_buf{}, landing_buf{};
  prim::lamport_slots landing{};
  prim::block_flags flags{};
  prim::epoch_counter epoch;
  prim::ce_streams ce{};
  int blocks = 0;
  bool emptied = false;  // the Lamport slots hold "empty" (lamport_empty_slots)
};

}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  const int64_t c = mgk::dim(ctx, "C");
  if (c < 0) return 1;
  auto* st = new state;
  ctx->state = st;
  int fit = ctx->num_sms, f = 0;
  for (auto kernel : {all_to_all_one_shot_push, all_to_all_one_shot_lamport, all_to_all_push}) {
    if (prim::resident_blocks(ctx, kernel, THREADS, 0, &f) != 0) return 1;
    fit = f < fit ? f : fit;
  }
  const int want = BLOCKS > 0 && BLOCKS < fit ? BLOCKS : fit;
  if (prim::setup_block_flags(ctx, kRegions, kMaxBlocks, want, &st->flag_buf, &st->flags, &st->blocks) != 0)
    return 1;
  MGK_CUDA_TRY(ctx, prim::ce_create(&st->ce, CE_STREAMS));
  const size_t one_shot_max = size_t(ONE_SHOT_MAX_KB > LAMPORT_MAX_KB ? ONE_SHOT_MAX_KB : LAMPORT_MAX_KB) * 1024;
  const size_t slot_bytes = prim::landing_slot_bytes(c, one_shot_max);
  if (slot_bytes > 0 && prim::lamport_alloc(ctx, slot_bytes, &st->landing_buf, &st->landing) != 0) return 1;
  return 0;
}

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int n_in, const mgk_tensor* out, int n_out,
                       cudaStream_t stream) {
  auto* st = static_cast<state*>(ctx->state);
  const mgk_tensor* x = mgk::find(in, n_in, "x");
  const mgk_tensor* y = mgk::find(out, n_out, "y");
  if (!x || !y) return mgk::set_error(ctx, "all_to_all expects an input 'x' and an output 'y'");
  operands o{};
  if (prim::view_of(ctx, *x, &o.x) != 0 || prim::view_of(ctx, *y, &o.y) != 0) return 1;
  o.landing = st->landing;
  o.flags = st->flags;
  o.chunk = int64_t(mgk::nbytes(*x)) / ctx->world_size;
  o.epoch = st->epoch.next();
  const size_t chunk = size_t(o.chunk);
  const bool fits = chunk <= st->landing.slot_bytes;
  if (fits && chunk % 16 == 0 && chunk <= size_t(LAMPORT_MAX_KB) * 1024) {
    MGK_CUDA_TRY(ctx, prim::lamport_empty_slots(&st->emptied, o.landing, o.flags, kEmptied, o.epoch, stream));
    all_to_all_one_shot_lamport<<<st->blocks, THREADS, 0, stream>>>(o);
  } else if (fits && chunk <= size_t(ONE_SHOT_MAX_KB) * 1024) {
    st->emptied = false;  // the flagged one-shot leaves data in the slots
    all_to_all_one_shot_push<<<st->blocks, THREADS, 0, stream>>>(o);
  } else if (chunk >= (size_t(CE_MIN_MB) << 20)) {
    const int me = ctx->rank, world = ctx->world_size;
    const char* xs = static_cast<const char*>(x->data);
    all_to_all_ce_handshake<<<1, 32, 0, stream>>>(st->flags, kCeStart, o.epoch);
    MGK_LAUNCH_CHECK(ctx);
    MGK_CUDA_TRY(ctx, prim::ce_begin(&st->ce, stream));
    for (int k = 1; k <= world; ++k) {  // peers first, my own y last
      const int p = (me + k) % world;
      MGK_CUDA_TRY(ctx, prim::ce_add(&st->ce, stream, static_cast<char*>(y->host_peers[p]) + me * chunk,
                                     xs + p * chunk, chunk));
    }
    MGK_CUDA_TRY(ctx, prim::ce_end(&st->ce, stream));
    all_to_all_ce_handshake<<<1, 32, 0, stream>>>(st->flags, kCeEnd, o.epoch);
  } else {
    all_to_all_push<<<st->blocks, THREADS, 0, stream>>>(o);
  }
  MGK_LAUNCH_CHECK(ctx);
  return 0;
}

MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) {
  auto* st = static_cast<state*>(ctx->state);
  if (st) prim::ce_destroy(&st->ce);
  delete st;
  ctx->state = nullptr;
}
