// Primitive under test: mechanism/tma_relay.cuh through block_mover<kTma>: bulk copies from
// this GPU into every peer's memory (a TMA push), with a body relayed through shared memory
// and a tail copied by the block (f32 at a size with tails: parts that start aligned and end
// unaligned), and the fallback to registers where a destination is not 16-byte aligned. An
// all-gather by push between two handshakes.
#include "primitive_test.cuh"

enum region { kStart, kEnd, kRegions };

struct operands {
  const char* x;
  prim::sym_view<char> y;
  int64_t bytes;  // of one rank's x
  prim::block_flags flags;
  uint64_t epoch;
};

__global__ void __launch_bounds__(primitive_test::kThreads) push_all(operands o) {
  const int me = o.y.rank;
  const prim::span part = prim::split_aligned(o.bytes, gridDim.x, blockIdx.x, 16);
  prim::block_mover<prim::kTma, 4, 3, 4096> mover;
  mover.init("tma test: stage", me);
  prim::block_handshake(o.flags.slots(kStart, blockIdx.x), o.epoch, "tma test: start");
  for (int k = 1; k <= o.y.world; ++k) {
    const int p = (me + k) % o.y.world;
    mover.copy(o.y.peer(p) + me * o.bytes + part.begin, o.x + part.begin, part.size());
  }
  mover.finish();
  prim::block_handshake(o.flags.slots(kEnd, blockIdx.x), o.epoch, "tma test: end");
}

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) { return primitive_test::setup(ctx, kRegions, push_all); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int n_in, const mgk_tensor* out, int n_out,
                       cudaStream_t stream) {
  auto* st = primitive_test::of(ctx);
  const mgk_tensor *x, *y;
  if (primitive_test::find_x_y(ctx, in, n_in, out, n_out, &x, &y) != 0) return 1;
  operands o{};
  if (prim::view_of(ctx, *y, &o.y) != 0) return 1;
  o.x = static_cast<const char*>(x->data);
  o.bytes = int64_t(mgk::nbytes(*x));
  o.flags = st->flags;
  o.epoch = st->epoch.next();
  push_all<<<st->blocks, primitive_test::kThreads, 0, stream>>>(o);
  MGK_LAUNCH_CHECK(ctx);
  return 0;
}
