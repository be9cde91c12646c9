// Primitive under test: mechanism/block_copy.cuh, register-level loads from peers through
// every alignment path (parts split evenly, not on 16-byte boundaries: 16-, 8-, 4-, 2- and
// 1-byte units all run). An all-gather by pull between two handshakes.
#include "primitive_test.cuh"

enum region { kStart, kEnd, kRegions };

struct operands {
  prim::sym_view<char> x;
  char* y;
  int64_t bytes;  // of one rank's x
  prim::block_flags flags;
  uint64_t epoch;
};

__global__ void __launch_bounds__(primitive_test::kThreads) pull_all(operands o) {
  const prim::span part = prim::split_even(o.bytes, gridDim.x, blockIdx.x);
  prim::block_handshake(o.flags.slots(kStart, blockIdx.x), o.epoch, "block_copy test: start");
  for (int r = 0; r < o.x.world; ++r)
    prim::block_copy<4>(o.y + r * o.bytes + part.begin, o.x.peer(r) + part.begin, part.size());
  prim::block_handshake(o.flags.slots(kEnd, blockIdx.x), o.epoch, "block_copy test: end");
}

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) { return primitive_test::setup(ctx, kRegions, pull_all); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int n_in, const mgk_tensor* out, int n_out,
                       cudaStream_t stream) {
  auto* st = primitive_test::of(ctx);
  const mgk_tensor *x, *y;
  if (primitive_test::find_x_y(ctx, in, n_in, out, n_out, &x, &y) != 0) return 1;
  operands o{};
  if (prim::view_of(ctx, *x, &o.x) != 0) return 1;
  o.y = static_cast<char*>(y->data);
  o.bytes = int64_t(mgk::nbytes(*x));
  o.flags = st->flags;
  o.epoch = st->epoch.next();
  pull_all<<<st->blocks, primitive_test::kThreads, 0, stream>>>(o);
  MGK_LAUNCH_CHECK(ctx);
  return 0;
}
