// Primitive under test: overlap/chunk_pipeline.cuh: each block pushes its chunk of my x into
// every rank's y and signals that chunk to that rank alone; each block then waits for its
// chunk from every rank (no end handshake: the chunk flags are the end). An all-gather by
// push after a start handshake.
#include "primitive_test.cuh"

enum region { kStart, kRegions };

struct operands {
  const char* x;
  prim::sym_view<char> y;
  int64_t bytes;  // of one rank's x
  prim::block_flags flags;
  prim::chunk_flags chunks;
  uint64_t epoch;
};

__global__ void __launch_bounds__(primitive_test::kThreads) push_chunks(operands o) {
  const int me = o.y.rank, world = o.y.world, chunk = int(blockIdx.x);
  const prim::span part = prim::split_aligned(o.bytes, gridDim.x, blockIdx.x, 16);
  prim::block_handshake(o.flags.slots(kStart, blockIdx.x), o.epoch, "chunk_flags test: start");
  for (int p = 0; p < world; ++p)
    prim::block_copy<4>(o.y.peer(p) + me * o.bytes + part.begin, o.x + part.begin, part.size());
  __syncthreads();  // the whole block's stores, before one thread per peer signals them
  for (int p = int(threadIdx.x); p < world; p += int(blockDim.x))
    if (p != me) o.chunks.signal(p, chunk, o.epoch);
  o.chunks.block_wait_all(chunk, o.epoch, "chunk_flags test: a peer's chunk");
}

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  if (primitive_test::setup(ctx, kRegions, push_chunks) != 0) return 1;
  auto* st = primitive_test::of(ctx);
  return prim::sym_alloc(ctx, prim::chunk_flags::bytes(st->blocks, ctx->world_size), "the chunk flags", &st->extra);
}

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
  o.chunks = prim::chunk_flags{prim::view_of<uint64_t>(ctx, st->extra), st->blocks};
  o.epoch = st->epoch.next();
  push_chunks<<<st->blocks, primitive_test::kThreads, 0, stream>>>(o);
  MGK_LAUNCH_CHECK(ctx);
  return 0;
}
