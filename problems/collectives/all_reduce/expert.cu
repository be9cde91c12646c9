// Expert all-reduce on the mgk primitives: y = sum over ranks of x (bf16 or fp32, summed
// in fp32), on the reduction template (primitives/collective/reduction.cuh). By size:
//  * one-shot push (bytes <= ONE_SHOT_MAX_KB): each rank pushes its x into a landing slot on
//    every peer and sums x with the landed copies locally; Lamport slots (LAMPORT=1, whole
//    16-byte vectors) need no sync at all, flagged ones one signal per block pair.
//  * two ranks (ONE_SHOT_W2=1): the one-shot moves exactly the bytes a two-shot does and
//    needs no handshake, so it runs at every size, on Lamport slots (10N bytes of slots per
//    rank for bf16).
//  * two-shot, fused (larger): rank r owns 1/W of the vector, pulls it from every rank,
//    sums it and stores the sum into every rank's y, between a start and an end handshake.
//    Moves 2(W-1)/W of the data per rank.
// Block b of every rank pairs with block b of every other rank (grid agreed at setup).
#include "mgk_primitives.cuh"

namespace prim = mgk::prim;

// ---- config: tuning knobs (the tuner rebuilds with -DNAME=value)
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
struct config {
  static constexpr int blocks = BLOCKS, threads = THREADS, unroll = UNROLL, lamport_lag = LAMPORT_LAG;
  static constexpr size_t one_shot_max_bytes = size_t(ONE_SHOT_MAX_KB) * 1024;
  static constexpr bool one_shot_w2 = ONE_SHOT_W2, lamport = LAMPORT;
};
using collective = prim::reduction<prim::two_shot_layout::all_reduce, config>;
}  // namespace

// ---- entry points (the solution ABI)
MGK_EXPORT int mgk_setup(mgk_ctx* ctx) { return collective::setup(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int n_in, const mgk_tensor* out, int n_out,
                       cudaStream_t stream) {
  return collective::run(ctx, in, n_in, out, n_out, stream);
}

MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { collective::teardown(ctx); }
