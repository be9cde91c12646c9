// Expert reduce on the mgk primitives: y_0 = sum over ranks of x (root 0; the other
// ranks' y is empty, though symmetric). bf16 or fp32, summed in fp32.
// Reduce-scatter fused with a gather to the root: rank r owns 1/W of the vector, pulls
// that segment from every rank, sums it, and stores the sum into the root's y. Every GPU
// sums a share in parallel, and the root receives 2(W-1)/W of the data instead of (W-1)
// times it. A start handshake (every x is ready, the root's y may be written) and an end
// handshake (every read of x and write into y_0 is done before anyone returns).
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

namespace {

enum region { kStart, kEnd, kRegions };
constexpr int kRoot = 0;

struct operands {
  prim::sym_view<char> x, y;
  prim::block_flags flags;
  int64_t n;  // elements of x
  uint64_t epoch;
};

template <class T>
__global__ void __launch_bounds__(THREADS) reduce_pull_to_root(operands o) {
  const int me = o.x.rank, world = o.x.world;
  constexpr int64_t kLanes = 16 / sizeof(T);
  const prim::span seg = prim::split_aligned(o.n, world, me, kLanes);  // the segment I sum
  const prim::span sub = prim::split_aligned(seg.size(), gridDim.x, blockIdx.x, kLanes);
  const int64_t first = seg.begin + sub.begin;
  prim::block_handshake(o.flags.slots(kStart, blockIdx.x), o.epoch, "reduce: start");
  __shared__ const T* srcs[MGK_MAX_WORLD];
  for (int r = threadIdx.x; r < world; r += blockDim.x) srcs[r] = reinterpret_cast<const T*>(o.x.peer(r)) + first;
  __syncthreads();
  prim::block_reduce<T, UNROLL>(reinterpret_cast<T*>(o.y.peer(kRoot)) + first, srcs, world, sub.size());
  prim::block_handshake(o.flags.slots(kEnd, blockIdx.x), o.epoch, "reduce: end");
}

struct state {
  prim::block_flags flags{};
  prim::epoch_counter epoch;
  int blocks = 0;
};

}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  auto* st = new state;
  ctx->state = st;
  return prim::setup_paired_grid(ctx, kRegions, THREADS, BLOCKS, &st->flags, &st->blocks,
                                 reduce_pull_to_root<__nv_bfloat16>, reduce_pull_to_root<float>);
}

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int n_in, const mgk_tensor* out, int n_out,
                       cudaStream_t stream) {
  auto* st = static_cast<state*>(ctx->state);
  const mgk_tensor* x = mgk::find(in, n_in, "x");
  const mgk_tensor* y = mgk::find(out, n_out, "y");
  if (!x || !y) return mgk::set_error(ctx, "reduce expects an input 'x' and an output 'y'");
  operands o{};
  if (prim::view_of(ctx, *x, &o.x) != 0 || prim::view_of(ctx, *y, &o.y) != 0) return 1;
  o.flags = st->flags;
  o.n = x->numel;
  if (x->dtype != MGK_BF16 && x->dtype != MGK_F32)
    return mgk::set_error(ctx, "reduce: dtype %d is not supported (bf16 and f32 are)", int(x->dtype));
  o.epoch = st->epoch.next();
  if (x->dtype == MGK_BF16)
    reduce_pull_to_root<__nv_bfloat16><<<st->blocks, THREADS, 0, stream>>>(o);
  else
    reduce_pull_to_root<float><<<st->blocks, THREADS, 0, stream>>>(o);
  MGK_LAUNCH_CHECK(ctx);
  return 0;
}

MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) {
  delete static_cast<state*>(ctx->state);
  ctx->state = nullptr;
}
