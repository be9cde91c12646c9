// Expert gather on the mgk primitives: y_0[s*C + i] = x_s[i] (root 0; the other ranks' y is
// empty, though symmetric). Pure data movement on bytes, on the rooted template
// (primitives/collective/rooted.cuh). By the chunk size:
//  * Lamport one-shot (a multiple of 16 bytes, <= LAMPORT_MAX_KB): every rank pushes x into
//    its landing slot on the root, which needs no signal; credits pace the senders.
//  * copy engine (>= CE_MIN_MB): every rank's push as cudaMemcpyAsync between two handshakes.
//  * rooted push (otherwise), per block pair: START from the root, every rank pushes x into
//    its chunk of y_0 (all GPUs' SMs work at once), END to the root; register stores or TMA
//    (MECH).
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
struct config {
  static constexpr int blocks = BLOCKS, threads = THREADS, unroll = UNROLL, lamport_lag = LAMPORT_LAG, mech = MECH;
  static constexpr size_t lamport_max_bytes = size_t(LAMPORT_MAX_KB) * 1024, ce_min_bytes = size_t(CE_MIN_MB) << 20;
};
using collective = prim::rooted_copy_collective<prim::rooted_layout::gather, config>;
}  // namespace

// ---- entry points (the solution ABI)
MGK_EXPORT int mgk_setup(mgk_ctx* ctx) { return collective::setup(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int n_in, const mgk_tensor* out, int n_out,
                       cudaStream_t stream) {
  return collective::run(ctx, in, n_in, out, n_out, stream);
}

MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { collective::teardown(ctx); }
