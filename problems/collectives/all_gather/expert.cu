// Expert all-gather on the mgk primitives: y[s*N + i] = x_s[i]. Pure data movement, so it
// works on bytes (any dtype). Four algorithms, chosen by the size of one rank's piece:
//  * one-shot push (N * elt <= ONE_SHOT_MAX_KB): each rank stores its x into a landing
//    slot on every peer, signals once, and copies the landed pieces into y locally. Slots
//    are double-buffered by epoch parity, so no start barrier is needed (a rank runs at
//    most one call ahead of a peer). One sync per call; the extra local copy is cheap
//    while the data is in L2.
//  * direct push (larger): after a start handshake (the peers' y may be written), each
//    rank stores its x straight into every rank's y, by register stores or TMA bulk
//    copies (MECH), then an end handshake (all data into my y has landed).
//  * copy engine (pieces >= CE_MIN_MB): the same push issued as cudaMemcpyAsync between
//    two one-block handshake kernels, over CE_STREAMS side streams.
//  * Lamport one-shot (piece bytes a multiple of 16, <= LAMPORT_MAX_KB; before all of the
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
// mgk:tune LAMPORT_MAX_KB 0 256 1024 2048 4096
#ifndef LAMPORT_MAX_KB
#define LAMPORT_MAX_KB 1024
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

__global__ void __launch_bounds__(THREADS) all_gather_lamport(prim::one_shot_args a) {
  prim::lamport_exchange<UNROLL, LAMPORT_LAG>(a, "all_gather lamport: the peers' data");
}

__global__ void __launch_bounds__(THREADS) all_gather_one_shot(prim::one_shot_args a, prim::block_flags flags) {
  prim::flagged_exchange<UNROLL>(a, flags.slots(kLanded, blockIdx.x), "all_gather one-shot: the peers' data");
}

// Direct push: my x into rank p's y at my place, peers first (the link is the long pole).
__global__ void __launch_bounds__(THREADS) all_gather_push(const char* x, prim::sym_view<char> y, int64_t part_bytes,
                                                           prim::block_flags flags, uint64_t epoch) {
  const int me = y.rank, world = y.world;
  const prim::span part = prim::split_aligned(part_bytes, gridDim.x, blockIdx.x, 16);
  prim::block_mover<MECH, UNROLL> mover;
  mover.init("all_gather push: TMA stage", me);
  prim::block_handshake(flags.slots(kStart, blockIdx.x), epoch, "all_gather push: start");
  for (int k = 1; k <= world; ++k) {
    const int p = (me + k) % world;
    mover.copy(y.peer(p) + me * part_bytes + part.begin, x + part.begin, part.size());
  }
  mover.finish();
  prim::block_handshake(flags.slots(kEnd, blockIdx.x), epoch, "all_gather push: end");
}

struct state {
  prim::landing_memory landing;
  prim::block_flags flags{};
  prim::epoch_counter epoch;
  prim::ce_streams ce{};
  int blocks = 0;
};

}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  const int64_t elems = mgk::dim(ctx, "N");
  if (elems < 0) return 1;
  const size_t elt = mgk::input_elem_bytes(ctx, "x");
  if (elt == 0) return 1;
  auto* st = new state;
  ctx->state = st;
  if (prim::setup_paired_grid(ctx, kRegions, THREADS, BLOCKS, &st->flags, &st->blocks, all_gather_lamport,
                              all_gather_one_shot, all_gather_push) != 0)
    return 1;
  MGK_CUDA_TRY(ctx, prim::ce_create(&st->ce, CE_STREAMS));
  const size_t one_shot_max = size_t(ONE_SHOT_MAX_KB > LAMPORT_MAX_KB ? ONE_SHOT_MAX_KB : LAMPORT_MAX_KB) * 1024;
  return st->landing.alloc(ctx, prim::landing_slot_bytes(elems, elt, one_shot_max));
}

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int n_in, const mgk_tensor* out, int n_out,
                       cudaStream_t stream) {
  auto* st = static_cast<state*>(ctx->state);
  const mgk_tensor* x = mgk::find(in, n_in, "x");
  const mgk_tensor* y = mgk::find(out, n_out, "y");
  if (!x || !y) return mgk::set_error(ctx, "all_gather expects an input 'x' and an output 'y'");
  const uint64_t epoch = st->epoch.next();
  const int me = ctx->rank, world = ctx->world_size;
  const size_t part = mgk::nbytes(*x);  // what one rank sends another
  prim::one_shot_args a{static_cast<const char*>(x->data), 0, static_cast<char*>(y->data), part, part, {}, epoch};
  const bool fits = part <= st->landing.capacity();
  if (fits && part % 16 == 0 && part <= size_t(LAMPORT_MAX_KB) * 1024) {
    MGK_CUDA_TRY(ctx, st->landing.for_lamport(st->flags, kEmptied, epoch, stream, &a.landing));
    all_gather_lamport<<<st->blocks, THREADS, 0, stream>>>(a);
  } else if (fits && part <= size_t(ONE_SHOT_MAX_KB) * 1024) {
    a.landing = st->landing.for_flagged();
    all_gather_one_shot<<<st->blocks, THREADS, 0, stream>>>(a, st->flags);
  } else if (part >= (size_t(CE_MIN_MB) << 20)) {
    prim::handshake_kernel<<<1, 32, 0, stream>>>(st->flags, kCeStart, epoch);
    MGK_LAUNCH_CHECK(ctx);
    MGK_CUDA_TRY(ctx, prim::ce_begin(&st->ce, stream));
    for (int k = 1; k <= world; ++k) {  // peers first, my own y last
      const int p = (me + k) % world;
      char* dst = static_cast<char*>(y->host_peers[p]) + me * part;
      MGK_CUDA_TRY(ctx, prim::ce_add(&st->ce, stream, dst, x->data, part));
    }
    MGK_CUDA_TRY(ctx, prim::ce_end(&st->ce, stream));
    prim::handshake_kernel<<<1, 32, 0, stream>>>(st->flags, kCeEnd, epoch);
  } else {
    prim::sym_view<char> yv;
    if (prim::view_of(ctx, *y, &yv) != 0) return 1;
    all_gather_push<<<st->blocks, THREADS, 0, stream>>>(a.x, yv, int64_t(part), st->flags, epoch);
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
