// Expert scatter on the mgk primitives: y_r[i] = x_0[r*C + i] (root 0; the other ranks'
// x is empty, though its symmetric allocation is W*C). Pure data movement on bytes. Three
// algorithms, chosen by the chunk size:
//  * Lamport (chunk bytes a multiple of 16, <= LAMPORT_MAX_KB): the root pushes chunk r
//    into rank r's landing slot, which needs no signal (transfer/flagless_push.cuh); each
//    rank copies what lands into y. Credits keep the root from running two calls ahead.
//  * rooted pull (larger), per block pair: the root signals START (my x is ready), copies
//    chunk 0 into its y and waits for END; the others wait for START, pull their chunk of
//    x_0 into y and signal END. Every rank pulls its own chunk, so all GPUs' SMs work at
//    once. Pulls use register loads or TMA (MECH).
//  * copy engine (>= CE_MIN_MB): the same pull as cudaMemcpyAsync between two handshakes.
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
#define MECH 0  // 0: register loads, 1: TMA bulk copies
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

__global__ void __launch_bounds__(THREADS) scatter_lamport(prim::one_shot_args a, prim::block_flags flags) {
  const auto credits = flags.slots(kCredit, blockIdx.x);
  prim::lamport_rooted_exchange<UNROLL, LAMPORT_LAG>(a, prim::flow::from_root, kRoot, credits,
                                                     "scatter lamport: the root's data");
}

// x, y: bytes; `bytes`: what each rank receives (broadcast, scatter) or sends (gather).
__global__ void __launch_bounds__(THREADS) scatter_pull(prim::sym_view<char> x, prim::sym_view<char> y, int64_t bytes,
                                                        prim::block_flags flags, uint64_t epoch) {
  const int me = x.rank;
  const prim::span part = prim::split_aligned(bytes, gridDim.x, blockIdx.x, 16);
  prim::block_rooted_copy<MECH, UNROLL>(y.local + part.begin, x.peer(kRoot) + me * bytes + part.begin, part.size(),
                                        flags.slots(kStart, blockIdx.x), flags.slots(kEnd, blockIdx.x), kRoot, epoch,
                                        "scatter (ranks wait for the root to start, the root for every reader of x)");
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
  if (prim::setup_paired_grid(ctx, kRegions, THREADS, BLOCKS, &st->flags, &st->blocks, scatter_lamport,
                              scatter_pull) != 0)
    return 1;
  return st->landing.alloc(ctx, prim::landing_slot_bytes(elems, elt, size_t(LAMPORT_MAX_KB) * 1024));
}

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int n_in, const mgk_tensor* out, int n_out,
                       cudaStream_t stream) {
  auto* st = static_cast<state*>(ctx->state);
  const mgk_tensor* x = mgk::find(in, n_in, "x");
  const mgk_tensor* y = mgk::find(out, n_out, "y");
  if (!x || !y) return mgk::set_error(ctx, "scatter expects an input 'x' and an output 'y'");
  const uint64_t epoch = st->epoch.next();
  const size_t bytes = mgk::nbytes(*y);
  if (bytes % 16 == 0 && bytes <= st->landing.capacity() && bytes <= size_t(LAMPORT_MAX_KB) * 1024) {
    prim::one_shot_args a{static_cast<const char*>(x->data), bytes, static_cast<char*>(y->data), 0, bytes, {},
                          epoch};
    MGK_CUDA_TRY(ctx, st->landing.for_lamport(st->flags, kEmptied, epoch, stream, &a.landing));
    scatter_lamport<<<st->blocks, THREADS, 0, stream>>>(a, st->flags);
  } else if (bytes >= (size_t(CE_MIN_MB) << 20)) {
    prim::handshake_kernel<<<1, 32, 0, stream>>>(st->flags, kCeStart, epoch);
    MGK_LAUNCH_CHECK(ctx);
    const char* x_root = static_cast<const char*>(x->host_peers[kRoot]);
    MGK_CUDA_TRY(ctx, prim::ce_copy(y->data, x_root + ctx->rank * bytes, bytes, stream));
    prim::handshake_kernel<<<1, 32, 0, stream>>>(st->flags, kCeEnd, epoch);
  } else {
    prim::sym_view<char> xv, yv;
    if (prim::view_of(ctx, *x, &xv) != 0 || prim::view_of(ctx, *y, &yv) != 0) return 1;
    scatter_pull<<<st->blocks, THREADS, 0, stream>>>(xv, yv, int64_t(bytes), st->flags, epoch);
  }
  MGK_LAUNCH_CHECK(ctx);
  return 0;
}

MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) {
  delete static_cast<state*>(ctx->state);
  ctx->state = nullptr;
}
