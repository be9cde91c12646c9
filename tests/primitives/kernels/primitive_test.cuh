// Shared by the primitive tests' kernels (tests/primitives/kernels/): each is a candidate of
// a collective problem that exercises one primitive as directly as it can, so a failure at
// `mgk eval` names that primitive. This header holds what they all need besides it: the
// state (paired grid, flags, epochs), the tensors 'x' and 'y', and the ABI's teardown.
#pragma once
#include "mgk_primitives.cuh"

namespace prim = mgk::prim;

namespace primitive_test {

constexpr int kThreads = 256;

struct state {
  prim::block_flags flags{};
  prim::epoch_counter epoch;
  int blocks = 0;
  prim::landing_memory landing;  // the tests of protocols
  prim::ce_streams ce{};         // the test of the copy engine
  mgk_sym_buffer extra{};        // flags of a test's own (grid barrier, chunk flags)
};

inline state* of(mgk_ctx* ctx) { return static_cast<state*>(ctx->state); }

// A new state with a paired grid of `kernels` and `regions` flag regions.
template <class... Kernels>
inline int setup(mgk_ctx* ctx, int regions, Kernels... kernels) {
  auto* st = new state;
  ctx->state = st;
  return prim::setup_paired_grid(ctx, regions, kThreads, 0, &st->flags, &st->blocks, kernels...);
}

inline int find_x_y(mgk_ctx* ctx, const mgk_tensor* in, int n_in, const mgk_tensor* out, int n_out,
                    const mgk_tensor** x, const mgk_tensor** y) {
  return prim::find_x_y(ctx, "the primitive test", in, n_in, out, n_out, x, y);
}

}  // namespace primitive_test

MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) {
  auto* st = primitive_test::of(ctx);
  if (st) prim::ce_destroy(&st->ce);
  delete st;
  ctx->state = nullptr;
}
