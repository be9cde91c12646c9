// Primitive under test: sync/grid_barrier.cuh: every block of every rank meets twice per
// call (epochs 2e - 1 and 2e on the same flags), before the peers' x are read and before
// any rank returns. An all-gather by pull, with no block-pair flags at all.
#include "primitive_test.cuh"

struct operands {
  prim::sym_view<char> x;
  char* y;
  int64_t bytes;  // of one rank's x
  prim::sym_view<uint64_t> barrier;
  uint64_t epoch;
};

__global__ void __launch_bounds__(primitive_test::kThreads) pull_all(operands o) {
  const prim::span part = prim::split_aligned(o.bytes, gridDim.x, blockIdx.x, 16);
  prim::grid_barrier(o.barrier, 2 * o.epoch - 1, "grid_barrier test: start");
  for (int r = 0; r < o.x.world; ++r)
    prim::block_copy<4>(o.y + r * o.bytes + part.begin, o.x.peer(r) + part.begin, part.size());
  prim::grid_barrier(o.barrier, 2 * o.epoch, "grid_barrier test: end");
}

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  if (primitive_test::setup(ctx, 0, pull_all) != 0) return 1;  // the grid only: every block resident
  auto* st = primitive_test::of(ctx);
  const size_t bytes = prim::grid_barrier_slots(ctx->world_size, st->blocks) * sizeof(uint64_t);
  return prim::sym_alloc(ctx, bytes, "the grid barrier", &st->extra);
}

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int n_in, const mgk_tensor* out, int n_out,
                       cudaStream_t stream) {
  auto* st = primitive_test::of(ctx);
  const mgk_tensor *x, *y;
  if (primitive_test::find_x_y(ctx, in, n_in, out, n_out, &x, &y) != 0) return 1;
  operands o{};
  if (prim::view_of(ctx, *x, &o.x) != 0) return 1;
  o.y = static_cast<char*>(y->data);
  o.bytes = int64_t(mgk::nbytes(*x));
  o.barrier = prim::view_of<uint64_t>(ctx, st->extra);
  o.epoch = st->epoch.next();
  pull_all<<<st->blocks, primitive_test::kThreads, 0, stream>>>(o);
  MGK_LAUNCH_CHECK(ctx);
  return 0;
}
