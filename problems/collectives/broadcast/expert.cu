// Expert broadcast on the mgk primitives: y = x_0 on every rank (root 0). Pure data
// movement, so it works on bytes (any dtype). Rooted protocol, per block pair:
//   root:   signal START to every rank (my x is ready), copy x into my own y, wait END;
//   others: wait START from the root, pull their part of x_0 into y, signal END to root.
// The root cannot return (and have its x rewritten) before every reader is done, and no
// rank reads x_0 before the root's call has started. Pulls use register loads or TMA
// (MECH); messages >= CE_MIN_MB go through the copy engine between two handshake kernels.
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

namespace {

enum region { kStart, kEnd, kCeStart, kCeEnd, kRegions };
constexpr int kMaxBlocks = 1024;
constexpr int kRoot = 0;

struct operands {
  prim::sym_view<char> x, y;  // [bytes] each
  prim::block_flags flags;
  int64_t bytes;
  uint64_t epoch;
};

__global__ void __launch_bounds__(THREADS) broadcast_pull(operands o) {
  const int me = o.x.rank;
  const prim::span part = prim::split_aligned(o.bytes, gridDim.x, blockIdx.x, 16);
  const auto start = o.flags.slots(kStart, blockIdx.x), end = o.flags.slots(kEnd, blockIdx.x);
  prim::block_mover<MECH, UNROLL> mover;
  mover.init("broadcast: TMA stage", me);
  if (me == kRoot) {
    prim::block_signal(start, o.epoch);
    mover.copy(o.y.local + part.begin, o.x.local + part.begin, part.size());
    mover.finish();
    prim::block_wait(end, o.epoch, "broadcast: root waiting for the readers of x to finish");
  } else {
    prim::block_wait(start, o.epoch, "broadcast: waiting for the root to start", kRoot);
    mover.copy(o.y.local + part.begin, o.x.peer(kRoot) + part.begin, part.size());
    mover.finish();
    prim::block_signal(end, o.epoch, kRoot);
  }
}

__global__ void broadcast_ce_handshake(prim::block_flags flags, int region, uint64_t epoch) {
  prim::block_handshake(flags.slots(region, 0), epoch, "broadcast copy engine: handshake");
}

struct state {
  mgk_sym_buffer flag_buf{};
  prim::block_flags flags{};
  prim::epoch_counter epoch;
  int blocks = 0;
};

}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  auto* st = new state;
  ctx->state = st;
  int fit = 0;
  if (prim::resident_blocks(ctx, broadcast_pull, THREADS, 0, &fit) != 0) return 1;
  fit = fit < ctx->num_sms ? fit : ctx->num_sms;
  const int want = BLOCKS > 0 && BLOCKS < fit ? BLOCKS : fit;
  return prim::setup_block_flags(ctx, kRegions, kMaxBlocks, want, &st->flag_buf, &st->flags, &st->blocks);
}

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int n_in, const mgk_tensor* out, int n_out,
                       cudaStream_t stream) {
  auto* st = static_cast<state*>(ctx->state);
  const mgk_tensor* x = mgk::find(in, n_in, "x");
  const mgk_tensor* y = mgk::find(out, n_out, "y");
  if (!x || !y) return mgk::set_error(ctx, "broadcast expects an input 'x' and an output 'y'");
  operands o{};
  if (prim::view_of(ctx, *x, &o.x) != 0 || prim::view_of(ctx, *y, &o.y) != 0) return 1;
  o.flags = st->flags;
  o.bytes = int64_t(mgk::nbytes(*y));
  o.epoch = st->epoch.next();
  if (size_t(o.bytes) >= (size_t(CE_MIN_MB) << 20)) {
    broadcast_ce_handshake<<<1, 32, 0, stream>>>(st->flags, kCeStart, o.epoch);
    MGK_LAUNCH_CHECK(ctx);
    MGK_CUDA_TRY(ctx, prim::ce_copy(y->data, x->host_peers[kRoot], size_t(o.bytes), stream));
    broadcast_ce_handshake<<<1, 32, 0, stream>>>(st->flags, kCeEnd, o.epoch);
  } else {
    broadcast_pull<<<st->blocks, THREADS, 0, stream>>>(o);
  }
  MGK_LAUNCH_CHECK(ctx);
  return 0;
}

MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) {
  delete static_cast<state*>(ctx->state);
  ctx->state = nullptr;
}
