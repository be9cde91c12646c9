// Expert reduce-scatter on the mgk primitives: y_r[i] = sum over s of x_s[r*C + i]
// (bf16 or fp32, summed in fp32). Two algorithms, chosen by the size of one chunk:
//  * one-shot push (C * elt <= ONE_SHOT_MAX_KB): each rank stores chunk p of its x into a
//    landing slot on rank p, signals once, and sums its own chunk with the landed ones.
//    Slots are double-buffered by epoch parity, so no start barrier is needed (a rank runs
//    at most one call ahead of a peer: it waited for that peer's data of the previous
//    call). One sync per call.
//  * pull (larger): after a start handshake, each rank loads its chunk from every rank's x
//    and sums it into y; an end handshake keeps every x alive until its readers are done.
// Block b of every rank pairs with block b of every other rank (grid agreed at setup).
#include "mgk_primitives.cuh"

namespace prim = mgk::prim;

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

namespace {

enum region { kLanded, kStart, kEnd, kRegions };
constexpr int kMaxBlocks = 1024;

struct operands {
  prim::sym_view<char> x, y;     // x: [world * c], y: [c]
  prim::sym_view<char> landing;  // [2 parities][world][slot_bytes]; one-shot only
  prim::block_flags flags;
  int64_t c;                     // elements per chunk
  size_t slot_bytes;
  uint64_t epoch;
};

template <class T>
__global__ void __launch_bounds__(THREADS) reduce_scatter_one_shot_push(operands o) {
  const int me = o.x.rank, world = o.x.world;
  const prim::span part = prim::split_aligned(o.c, gridDim.x, blockIdx.x, 16 / sizeof(T));
  const size_t off = part.begin * sizeof(T), len = part.size() * sizeof(T), chunk = o.c * sizeof(T);
  const size_t parity = o.epoch & 1;
  auto slot = [&](int src) { return (parity * world + src) * o.slot_bytes + off; };
  for (int k = 1; k < world; ++k) {  // chunk p of my x into rank p's landing slot for me
    const int p = (me + k) % world;
    prim::block_copy<UNROLL>(o.landing.peer(p) + slot(me), o.x.local + p * chunk + off, len);
  }
  const auto slots = o.flags.slots(kLanded, blockIdx.x);
  prim::block_signal(slots, o.epoch);
  prim::block_wait(slots, o.epoch, "reduce_scatter one-shot: waiting for the peers' data");
  __shared__ const T* srcs[MGK_MAX_WORLD];
  for (int s = threadIdx.x; s < world; s += blockDim.x)
    srcs[s] = reinterpret_cast<const T*>(s == me ? o.x.local + me * chunk + off : o.landing.local + slot(s));
  __syncthreads();
  prim::block_reduce<T, UNROLL>(reinterpret_cast<T*>(o.y.local + off), srcs, world, part.size());
}

template <class T>
__global__ void __launch_bounds__(THREADS) reduce_scatter_pull(operands o) {
  const int me = o.x.rank, world = o.x.world;
  const prim::span part = prim::split_aligned(o.c, gridDim.x, blockIdx.x, 16 / sizeof(T));
  prim::block_handshake(o.flags.slots(kStart, blockIdx.x), o.epoch, "reduce_scatter pull: start");
  __shared__ const T* srcs[MGK_MAX_WORLD];
  for (int s = threadIdx.x; s < world; s += blockDim.x)
    srcs[s] = reinterpret_cast<const T*>(o.x.peer(s)) + me * o.c + part.begin;
  __syncthreads();
  prim::block_reduce<T, UNROLL>(reinterpret_cast<T*>(o.y.local) + part.begin, srcs, world, part.size());
  prim::block_handshake(o.flags.slots(kEnd, blockIdx.x), o.epoch, "reduce_scatter pull: end");
}

struct state {
  mgk_sym_buffer flag_buf{}, landing_buf{};
  prim::block_flags flags{};
  prim::epoch_counter epoch;
  int blocks = 0;
  size_t slot_bytes = 0;  // 0: no landing slots, never one-shot
};

template <class T>
void launch(const state& st, const operands& o, bool one_shot, cudaStream_t stream) {
  if (one_shot)
    reduce_scatter_one_shot_push<T><<<st.blocks, THREADS, 0, stream>>>(o);
  else
    reduce_scatter_pull<T><<<st.blocks, THREADS, 0, stream>>>(o);
}

}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  const int64_t c = mgk::dim(ctx, "C");
  if (c < 0) return 1;
  auto* st = new state;
  ctx->state = st;
  int fit = ctx->num_sms, f = 0;
  for (auto kernel : {reduce_scatter_one_shot_push<__nv_bfloat16>, reduce_scatter_one_shot_push<float>,
                      reduce_scatter_pull<__nv_bfloat16>, reduce_scatter_pull<float>}) {
    if (prim::resident_blocks(ctx, kernel, THREADS, 0, &f) != 0) return 1;
    fit = f < fit ? f : fit;
  }
  const int want = BLOCKS > 0 && BLOCKS < fit ? BLOCKS : fit;
  if (prim::setup_block_flags(ctx, kRegions, kMaxBlocks, want, &st->flag_buf, &st->flags, &st->blocks) != 0)
    return 1;
  st->slot_bytes = prim::landing_slot_bytes(c, size_t(ONE_SHOT_MAX_KB) * 1024);
  if (st->slot_bytes > 0) {
    if (prim::sym_alloc(ctx, 2 * size_t(ctx->world_size) * st->slot_bytes, "one-shot landing slots",
                        &st->landing_buf) != 0)
      return 1;
  }
  return 0;
}

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int n_in, const mgk_tensor* out, int n_out,
                       cudaStream_t stream) {
  auto* st = static_cast<state*>(ctx->state);
  const mgk_tensor* x = mgk::find(in, n_in, "x");
  const mgk_tensor* y = mgk::find(out, n_out, "y");
  if (!x || !y) return mgk::set_error(ctx, "reduce_scatter expects an input 'x' and an output 'y'");
  operands o{};
  if (prim::view_of(ctx, *x, &o.x) != 0 || prim::view_of(ctx, *y, &o.y) != 0) return 1;
  o.landing = prim::view_of<char>(ctx, st->landing_buf);
  o.flags = st->flags;
  o.c = y->numel;
  o.slot_bytes = st->slot_bytes;
  const size_t chunk = mgk::nbytes(*y);
  const bool one_shot = chunk <= size_t(ONE_SHOT_MAX_KB) * 1024 && chunk <= st->slot_bytes;
  if (x->dtype != MGK_BF16 && x->dtype != MGK_F32)
    return mgk::set_error(ctx, "reduce_scatter: dtype %d is not supported (bf16 and f32 are)", int(x->dtype));
  o.epoch = st->epoch.next();
  if (x->dtype == MGK_BF16)
    launch<__nv_bfloat16>(*st, o, one_shot, stream);
  else
    launch<float>(*st, o, one_shot, stream);
  MGK_LAUNCH_CHECK(ctx);
  return 0;
}

MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) {
  delete static_cast<state*>(ctx->state);
  ctx->state = nullptr;
}
