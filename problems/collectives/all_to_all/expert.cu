// Expert all-to-all on the mgk primitives: y_r[s*C + i] = x_s[r*C + i]. Pure data movement
// on bytes (any dtype), on the exchange template (primitives/collective/exchange.cuh). By
// the chunk size:
//  * Lamport one-shot (a multiple of 16 bytes, <= LAMPORT_MAX_KB): each rank pushes chunk p
//    of its x into a landing slot on rank p, which sees each vector land; no signal at all.
//  * flagged one-shot (<= ONE_SHOT_MAX_KB): the same push and one signal per block pair.
//  * copy engine (>= CE_MIN_MB): the direct push as cudaMemcpyAsync over CE_STREAMS streams.
//  * direct push (otherwise): between two handshakes, chunk p of x straight into rank p's y,
//    by register stores or TMA bulk copies (MECH).
// Block b of every rank pairs with block b of every other rank (grid agreed at setup).
#include "mgk_primitives.cuh"

namespace prim = mgk::prim;

// ---- config: tuning knobs (the tuner rebuilds with -DNAME=value)
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
struct config {
  static constexpr int blocks = BLOCKS, threads = THREADS, unroll = UNROLL, lamport_lag = LAMPORT_LAG;
  static constexpr int mech = MECH, ce_streams = CE_STREAMS;
  static constexpr size_t one_shot_max_bytes = size_t(ONE_SHOT_MAX_KB) * 1024;
  static constexpr size_t lamport_max_bytes = size_t(LAMPORT_MAX_KB) * 1024, ce_min_bytes = size_t(CE_MIN_MB) << 20;
};
using collective = prim::exchange<prim::exchange_layout::all_to_all, config>;
}  // namespace

// ---- entry points (the solution ABI)
MGK_EXPORT int mgk_setup(mgk_ctx* ctx) { return collective::setup(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int n_in, const mgk_tensor* out, int n_out,
                       cudaStream_t stream) {
  return collective::run(ctx, in, n_in, out, n_out, stream);
}

MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { collective::teardown(ctx); }
