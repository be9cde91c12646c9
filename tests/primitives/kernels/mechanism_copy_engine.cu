// Primitive under test: mechanism/copy_engine.cuh: side streams forked from and joined back
// into the call's stream, each copy cut into three pieces spread over them, ordered across
// ranks by one-block handshake kernels (sync/peer_signals.cuh). An all-gather by push.
#include "primitive_test.cuh"

enum region { kStart, kEnd, kRegions };

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  if (primitive_test::setup(ctx, kRegions, prim::handshake_kernel<0>) != 0) return 1;
  MGK_CUDA_TRY(ctx, prim::ce_create(&primitive_test::of(ctx)->ce, 2));
  return 0;
}

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int n_in, const mgk_tensor* out, int n_out,
                       cudaStream_t stream) {
  auto* st = primitive_test::of(ctx);
  const mgk_tensor *x, *y;
  if (primitive_test::find_x_y(ctx, in, n_in, out, n_out, &x, &y) != 0) return 1;
  const uint64_t epoch = st->epoch.next();
  const size_t bytes = mgk::nbytes(*x);
  prim::handshake_kernel<<<1, 32, 0, stream>>>(st->flags, kStart, epoch);  // every y may be written
  MGK_LAUNCH_CHECK(ctx);
  MGK_CUDA_TRY(ctx, prim::ce_begin(&st->ce, stream));
  for (int p = 0; p < ctx->world_size; ++p) {
    char* dst = static_cast<char*>(y->host_peers[p]) + ctx->rank * bytes;
    MGK_CUDA_TRY(ctx, prim::ce_add(&st->ce, stream, dst, x->data, bytes, 3));
  }
  MGK_CUDA_TRY(ctx, prim::ce_end(&st->ce, stream));
  prim::handshake_kernel<<<1, 32, 0, stream>>>(st->flags, kEnd, epoch);  // every push into my y has landed
  MGK_LAUNCH_CHECK(ctx);
  return 0;
}
