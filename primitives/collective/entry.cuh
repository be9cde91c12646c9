// What the collective templates (reduction.cuh, exchange.cuh, rooted.cuh) share on the host:
// the state a collective keeps between calls and the checks of mgk_run's tensors, and the
// three ABI entry points of a solution that is one collective, which
// MGK_COLLECTIVE_ENTRY_POINTS(collective) (at the end) writes:
//
//   MGK_EXPORT int mgk_setup(mgk_ctx* ctx) { return collective::setup(ctx); }
//   MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int n_in, const mgk_tensor* out,
//                          int n_out, cudaStream_t stream) {
//     return collective::run(ctx, in, n_in, out, n_out, stream);
//   }
//   MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { collective::teardown(ctx); }
//
// where `collective` names a template instantiated with the solution's layout and config (a
// struct of its tuning knobs as constants; each template says which it reads; knobs.cuh
// makes one from the knob macros).
#pragma once
#include "../host/host.cuh"
#include "../mechanism/copy_engine.cuh"

namespace mgk::prim {

// The state of a collective: its landing slots, flags, epochs and grid, and (exchanges)
// the copy engine's side streams. Made in setup, deleted in teardown.
struct collective_state {
  landing_memory landing;
  block_flags flags{};
  epoch_counter epoch;
  ce_streams ce{};
  int blocks = 0;
};

// The input 'x' and the output 'y' of a collective named `name`; fails saying so.
inline int find_x_y(mgk_ctx* ctx, const char* name, const mgk_tensor* in, int n_in, const mgk_tensor* out,
                    int n_out, const mgk_tensor** x, const mgk_tensor** y) {
  *x = mgk::find(in, n_in, "x");
  *y = mgk::find(out, n_out, "y");
  if (!*x || !*y) return mgk::set_error(ctx, "%s expects an input 'x' and an output 'y'", name);
  return 0;
}

// launch.template operator()<T>() for x's dtype, T = __nv_bfloat16 or float (what the
// reductions sum); any other dtype fails naming `name`.
template <class Launch>
inline int by_sum_dtype(mgk_ctx* ctx, const char* name, const mgk_tensor& x, Launch&& launch) {
  if (x.dtype == MGK_BF16) return launch.template operator()<__nv_bfloat16>();
  if (x.dtype == MGK_F32) return launch.template operator()<float>();
  return mgk::set_error(ctx, "%s: dtype %d is not supported (bf16 and f32 are)", name, int(x.dtype));
}

// The start of every collective's mgk_setup: dim `dim` (the elements that size its landing
// slots) in *elems and the element size of 'x' in *elt, then a new state in ctx->state with
// a grid that pairs with every rank's, keeps each of `kernels` resident (C::threads
// threads, at most C::blocks blocks when it is above 0) and has `regions` flag regions.
template <class C, class... Kernels>
inline int setup_collective(mgk_ctx* ctx, const char* dim, int regions, int64_t* elems, size_t* elt,
                            Kernels... kernels) {
  *elems = mgk::dim(ctx, dim);
  if (*elems < 0) return 1;
  *elt = mgk::input_elem_bytes(ctx, "x");
  if (*elt == 0) return 1;
  auto* st = new collective_state;
  ctx->state = st;
  return setup_paired_grid(ctx, regions, C::threads, C::blocks, &st->flags, &st->blocks, kernels...);
}

inline collective_state& state_of(mgk_ctx* ctx) { return *static_cast<collective_state*>(ctx->state); }

// The mgk_run of a reduction named `name`: 'x' and 'y' found, then
// launch.template operator()<T>(x, y) for x's dtype (see by_sum_dtype).
template <class Launch>
inline int run_summing(mgk_ctx* ctx, const char* name, const mgk_tensor* in, int n_in, const mgk_tensor* out,
                       int n_out, Launch&& launch) {
  const mgk_tensor *x, *y;
  if (find_x_y(ctx, name, in, n_in, out, n_out, &x, &y) != 0) return 1;
  return by_sum_dtype(ctx, name, *x, [&]<class T>() { return launch.template operator()<T>(*x, *y); });
}

inline void delete_collective_state(mgk_ctx* ctx) {
  auto* st = static_cast<collective_state*>(ctx->state);
  if (st) ce_destroy(&st->ce);
  delete st;
  ctx->state = nullptr;
}

}  // namespace mgk::prim

// The three ABI entry points of a solution that is the collective `Collective` (a template of
// this folder, instantiated), forwarding to its setup, run and teardown as shown at the top.
#define MGK_COLLECTIVE_ENTRY_POINTS(Collective)                                                                 \
  MGK_EXPORT int mgk_setup(mgk_ctx* ctx) { return Collective::setup(ctx); }                                     \
  MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int n_in, const mgk_tensor* out, int n_out,        \
                         cudaStream_t stream) {                                                                 \
    return Collective::run(ctx, in, n_in, out, n_out, stream);                                                  \
  }                                                                                                             \
  MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { Collective::teardown(ctx); }
