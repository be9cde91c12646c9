// Expert gather on the mgk primitives: y_0[s*C + i] = x_s[i] (root 0; the other ranks'
// y is empty, though symmetric). Pure data movement on bytes. Three algorithms, chosen by
// the chunk size:
//  * Lamport (chunk bytes a multiple of 16, <= LAMPORT_MAX_KB): every rank pushes x into
//    its landing slot on the root, which needs no signal (transfer/flagless_push.cuh); the
//    root copies what lands into y. Credits keep a rank from running two calls ahead.
//  * rooted push (larger), per block pair: the root signals START (my y may be written),
//    copies its x into chunk 0 of y and waits for END (every chunk has landed); the others
//    wait for START, push x into their chunk of y_0 and signal END. Every rank pushes its
//    own chunk, so all GPUs' SMs work at once. Register stores or TMA (MECH).
//  * copy engine (>= CE_MIN_MB): the same push as cudaMemcpyAsync between two handshakes.
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
// mgk:tune MECH 0 1
#ifndef MECH
#define MECH 0  // 0: register stores, 1: TMA bulk copies
#endif
// mgk:tune CE_MIN_MB 16 64 256 1048576
#ifndef CE_MIN_MB
#define CE_MIN_MB 64  // 1048576: never use the copy engine
#endif
// mgk:tune LAMPORT_MAX_KB 0 256 1024 4096 16384
#ifndef LAMPORT_MAX_KB
#define LAMPORT_MAX_KB 1024
#endif
// mgk:tune LAMPORT_LAG 1 2 4
#ifndef LAMPORT_LAG
#define LAMPORT_LAG 1  // the local copies trail the sends by this many steps
#endif

namespace {

enum region { kStart, kEnd, kCeStart, kCeEnd, kCredit, kEmptied, kRegions };
constexpr int kRoot = 0;

__global__ void __launch_bounds__(THREADS) gather_lamport(prim::one_shot_args a, prim::block_flags flags) {
  const auto credits = flags.slots(kCredit, blockIdx.x);
  prim::lamport_rooted_exchange<UNROLL, LAMPORT_LAG>(a, prim::flow::to_root, kRoot, credits,
                                                     "gather lamport: the ranks' chunks");
}

// x, y: bytes; `bytes`: what each rank receives (broadcast, scatter) or sends (gather).
__global__ void __launch_bounds__(THREADS) gather_push(prim::sym_view<char> x, prim::sym_view<char> y, int64_t bytes,
                                                       prim::block_flags flags, uint64_t epoch) {
  const int me = x.rank;
  const prim::span part = prim::split_aligned(bytes, gridDim.x, blockIdx.x, 16);
  prim::block_rooted_copy<MECH, UNROLL>(y.peer(kRoot) + me * bytes + part.begin, x.local + part.begin, part.size(),
                                        flags.slots(kStart, blockIdx.x), flags.slots(kEnd, blockIdx.x), kRoot, epoch,
                                        "gather (ranks wait for the root to start, the root for every rank's chunk)");
}

struct state {
  prim::landing_memory landing;
  prim::block_flags flags{};
  prim::epoch_counter epoch;
  int blocks = 0;
};

}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  auto* st = new state;
  ctx->state = st;
  const int64_t elems = mgk::dim(ctx, "C");
  if (elems < 0) return 1;
  const size_t elt = mgk::input_elem_bytes(ctx, "x");
  if (elt == 0) return 1;
  if (prim::setup_paired_grid(ctx, kRegions, THREADS, BLOCKS, &st->flags, &st->blocks, gather_lamport,
                              gather_push) != 0)
    return 1;
  return st->landing.alloc(ctx, prim::landing_slot_bytes(elems, elt, size_t(LAMPORT_MAX_KB) * 1024));
}

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int n_in, const mgk_tensor* out, int n_out,
                       cudaStream_t stream) {
  auto* st = static_cast<state*>(ctx->state);
  const mgk_tensor* x = mgk::find(in, n_in, "x");
  const mgk_tensor* y = mgk::find(out, n_out, "y");
  if (!x || !y) return mgk::set_error(ctx, "gather expects an input 'x' and an output 'y'");
  const uint64_t epoch = st->epoch.next();
  const size_t bytes = mgk::nbytes(*x);
  if (bytes % 16 == 0 && bytes <= st->landing.capacity() && bytes <= size_t(LAMPORT_MAX_KB) * 1024) {
    prim::one_shot_args a{static_cast<const char*>(x->data), 0, static_cast<char*>(y->data), bytes, bytes, {},
                          epoch};
    MGK_CUDA_TRY(ctx, st->landing.for_lamport(st->flags, kEmptied, epoch, stream, &a.landing));
    gather_lamport<<<st->blocks, THREADS, 0, stream>>>(a, st->flags);
  } else if (bytes >= (size_t(CE_MIN_MB) << 20)) {
    prim::handshake_kernel<<<1, 32, 0, stream>>>(st->flags, kCeStart, epoch);
    MGK_LAUNCH_CHECK(ctx);
    char* y_root = static_cast<char*>(y->host_peers[kRoot]);
    MGK_CUDA_TRY(ctx, prim::ce_copy(y_root + ctx->rank * bytes, x->data, bytes, stream));
    prim::handshake_kernel<<<1, 32, 0, stream>>>(st->flags, kCeEnd, epoch);
  } else {
    prim::sym_view<char> xv, yv;
    if (prim::view_of(ctx, *x, &xv) != 0 || prim::view_of(ctx, *y, &yv) != 0) return 1;
    gather_push<<<st->blocks, THREADS, 0, stream>>>(xv, yv, int64_t(bytes), st->flags, epoch);
  }
  MGK_LAUNCH_CHECK(ctx);
  return 0;
}

MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) {
  delete static_cast<state*>(ctx->state);
  ctx->state = nullptr;
}
