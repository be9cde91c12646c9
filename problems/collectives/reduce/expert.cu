// Expert reduce on the mgk primitives: y_0 = sum over ranks of x (root 0; the other ranks' y
// is empty, though symmetric), bf16 or fp32 summed in fp32, on the rooted template
// (primitives/collective/rooted.cuh). By size:
//  * Lamport one-shot (a multiple of 16 bytes, <= LAMPORT_MAX_KB): every rank pushes x into
//    its landing slot on the root, which sums its x with what lands; credits pace the senders.
//  * two-shot to the root (larger): rank r sums 1/W of the vector, pulled from every rank,
//    into the root's y: every GPU sums a share, and the root receives 2(W-1)/W of the data
//    instead of W-1 times it. Between a start and an end handshake.
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
// mgk:tune LAMPORT_MAX_KB 0 256 1024 4096 16384
#ifndef LAMPORT_MAX_KB
#define LAMPORT_MAX_KB 1024
#endif
// mgk:tune LAMPORT_LAG 1 2 4
#ifndef LAMPORT_LAG
#define LAMPORT_LAG 1  // the sums trail the sends by this many steps
#endif

namespace {
struct config {
  static constexpr int blocks = BLOCKS, threads = THREADS, unroll = UNROLL, lamport_lag = LAMPORT_LAG;
  static constexpr size_t lamport_max_bytes = size_t(LAMPORT_MAX_KB) * 1024;
};
using collective = prim::rooted_reduce<config>;
}  // namespace

// ---- entry points (the solution ABI)
MGK_EXPORT int mgk_setup(mgk_ctx* ctx) { return collective::setup(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int n_in, const mgk_tensor* out, int n_out,
                       cudaStream_t stream) {
  return collective::run(ctx, in, n_in, out, n_out, stream);
}

MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { collective::teardown(ctx); }
