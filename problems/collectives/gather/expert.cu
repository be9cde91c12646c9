// Expert gather on the mgk primitives: y_0[s*C + i] = x_s[i] (root 0; the other ranks'
// y is empty, though symmetric). Pure data movement on bytes. Rooted protocol, per block
// pair:
//   root:   signal START to every rank (my y may be written), copy my x into chunk 0 of
//           y, wait END (every rank's chunk has landed);
//   others: wait START from the root, push x into their chunk of y_0, signal END to root.
// Every rank pushes its own chunk, so all GPUs' SMs (or copy engines) work at once. Pushes
// use register stores or TMA (MECH); chunks >= CE_MIN_MB go through the copy engine
// between two handshake kernels. Block b pairs with block b (grid agreed at setup).
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

namespace {

enum region { kStart, kEnd, kCeStart, kCeEnd, kRegions };
constexpr int kMaxBlocks = 1024;
constexpr int kRoot = 0;

struct operands {
  prim::sym_view<char> x, y;  // x: [chunk], y: [world * chunk] on the root (bytes)
  prim::block_flags flags;
  int64_t chunk;
  uint64_t epoch;
};

__global__ void __launch_bounds__(THREADS) gather_push(operands o) {
  const int me = o.x.rank;
  const prim::span part = prim::split_aligned(o.chunk, gridDim.x, blockIdx.x, 16);
  const auto start = o.flags.slots(kStart, blockIdx.x), end = o.flags.slots(kEnd, blockIdx.x);
  prim::block_mover<MECH, UNROLL> mover;
  mover.init("gather: TMA stage", me);
  if (me == kRoot) {
    prim::block_signal(start, o.epoch);
    mover.copy(o.y.local + kRoot * o.chunk + part.begin, o.x.local + part.begin, part.size());
    mover.finish();
    prim::block_wait(end, o.epoch, "gather: root waiting for the ranks' chunks");
  } else {
    prim::block_wait(start, o.epoch, "gather: waiting for the root to start", kRoot);
    mover.copy(o.y.peer(kRoot) + me * o.chunk + part.begin, o.x.local + part.begin, part.size());
    mover.finish();
    prim::block_signal(end, o.epoch, kRoot);
  }
}

__global__ void gather_ce_handshake(prim::block_flags flags, int region, uint64_t epoch) {
  prim::block_handshake(flags.slots(region, 0), epoch, "gather copy engine: handshake");
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
  if (prim::resident_blocks(ctx, gather_push, THREADS, 0, &fit) != 0) return 1;
  fit = fit < ctx->num_sms ? fit : ctx->num_sms;
  const int want = BLOCKS > 0 && BLOCKS < fit ? BLOCKS : fit;
  return prim::setup_block_flags(ctx, kRegions, kMaxBlocks, want, &st->flag_buf, &st->flags, &st->blocks);
}

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int n_in, const mgk_tensor* out, int n_out,
                       cudaStream_t stream) {
  auto* st = static_cast<state*>(ctx->state);
  const mgk_tensor* x = mgk::find(in, n_in, "x");
  const mgk_tensor* y = mgk::find(out, n_out, "y");
  if (!x || !y) return mgk::set_error(ctx, "gather expects an input 'x' and an output 'y'");
  operands o{};
  if (prim::view_of(ctx, *x, &o.x) != 0 || prim::view_of(ctx, *y, &o.y) != 0) return 1;
  o.flags = st->flags;
  o.chunk = int64_t(mgk::nbytes(*x));
  o.epoch = st->epoch.next();
  if (size_t(o.chunk) >= (size_t(CE_MIN_MB) << 20)) {
    char* y_root = static_cast<char*>(y->host_peers[kRoot]);
    gather_ce_handshake<<<1, 32, 0, stream>>>(st->flags, kCeStart, o.epoch);
    MGK_LAUNCH_CHECK(ctx);
    MGK_CUDA_TRY(ctx, prim::ce_copy(y_root + ctx->rank * o.chunk, x->data, size_t(o.chunk), stream));
    gather_ce_handshake<<<1, 32, 0, stream>>>(st->flags, kCeEnd, o.epoch);
  } else {
    gather_push<<<st->blocks, THREADS, 0, stream>>>(o);
  }
  MGK_LAUNCH_CHECK(ctx);
  return 0;
}

MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) {
  delete static_cast<state*>(ctx->state);
  ctx->state = nullptr;
}
