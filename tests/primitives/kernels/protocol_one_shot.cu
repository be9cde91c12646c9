// Primitives under test: protocol/ (the Lamport slots, send and take, their block-level
// exchange) and host/landing_memory.cuh: an all-to-all by one-shot whose protocol changes
// from call to call where chunks are whole 16-byte vectors (lamport on odd calls, flagged on
// even ones, so the slots are refilled with "empty" before every Lamport call), flagged
// where they are not. The GPU test also builds it with -D MGK_LAMPORT_ESCAPE_ALL=1.
#include "primitive_test.cuh"

enum region { kLanded, kEmptied, kRegions };

template <class P>
__global__ void __launch_bounds__(primitive_test::kThreads) exchange(prim::one_shot_args a, prim::block_flags flags) {
  prim::one_shot_exchange<P, 2, 2>(a, flags.slots(kLanded, blockIdx.x), "protocol test: the peers' chunks");
}

template <class P>
int launch(mgk_ctx* ctx, prim::one_shot_args a, cudaStream_t stream) {
  auto* st = primitive_test::of(ctx);
  MGK_CUDA_TRY(ctx, st->landing.slots_for<P>(st->flags, kEmptied, a.epoch, stream, &a.landing));
  exchange<P><<<st->blocks, primitive_test::kThreads, 0, stream>>>(a, st->flags);
  MGK_LAUNCH_CHECK(ctx);
  return 0;
}

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  const int64_t c = mgk::dim(ctx, "C");
  const size_t elt = mgk::input_elem_bytes(ctx, "x");
  if (c < 0 || elt == 0) return 1;
  if (primitive_test::setup(ctx, kRegions, exchange<prim::lamport>, exchange<prim::flagged>) != 0) return 1;
  return primitive_test::of(ctx)->landing.alloc(ctx, prim::landing_slot_bytes(c, elt, SIZE_MAX));
}

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int n_in, const mgk_tensor* out, int n_out,
                       cudaStream_t stream) {
  auto* st = primitive_test::of(ctx);
  const mgk_tensor *x, *y;
  if (primitive_test::find_x_y(ctx, in, n_in, out, n_out, &x, &y) != 0) return 1;
  const uint64_t epoch = st->epoch.next();
  const size_t chunk = mgk::nbytes(*x) / size_t(ctx->world_size);
  if (chunk > st->landing.capacity()) return mgk::set_error(ctx, "protocol test: the chunk outgrew its slots");
  const prim::one_shot_args a{static_cast<const char*>(x->data), chunk, static_cast<char*>(y->data), chunk, chunk,
                              {}, epoch};
  if (chunk % 16 == 0 && epoch % 2 == 1) return launch<prim::lamport>(ctx, a, stream);
  return launch<prim::flagged>(ctx, a, stream);
}
