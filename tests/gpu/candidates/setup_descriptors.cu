// The plain all-reduce, plus a check of the ABI's setup descriptors: mgk_setup must see
// every tensor mgk_run will get (name, dtype, shape, numel) with no data yet, and each run
// must get exactly those. Fails the run, naming the difference, otherwise.
#include <cstring>

#include "simple_common.cuh"

namespace {

struct Seen {
  int n_in = 0, n_out = 0;
  mgk_tensor in[4], out[4];
};
Seen seen;

// Empty when `a` (from setup) and `b` (from run) describe the same tensor.
const char* difference(const mgk_tensor& a, const mgk_tensor& b) {
  if (std::strcmp(a.name, b.name) != 0) return "name";
  if (a.dtype != b.dtype) return "dtype";
  if (a.numel != b.numel || a.ndim != b.ndim) return "numel or rank";
  for (int d = 0; d < a.ndim; ++d)
    if (a.shape[d] != b.shape[d]) return "shape";
  return "";
}

int compare(mgk_ctx* ctx, const char* what, const mgk_tensor* setup, int n_setup, const mgk_tensor* run, int n_run) {
  if (n_setup != n_run) return mgk::set_error(ctx, "setup saw %d %s, run got %d", n_setup, what, n_run);
  for (int i = 0; i < n_run; ++i)
    if (*difference(setup[i], run[i]))
      return mgk::set_error(ctx, "%s %d ('%s'): the setup descriptor's %s differs from the run's", what, i,
                            run[i].name, difference(setup[i], run[i]));
  return 0;
}

}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  if (ctx->num_inputs < 1 || ctx->num_inputs > 4 || ctx->num_outputs < 1 || ctx->num_outputs > 4)
    return mgk::set_error(ctx, "setup saw %d inputs and %d outputs", ctx->num_inputs, ctx->num_outputs);
  for (int i = 0; i < ctx->num_inputs; ++i)
    if (ctx->inputs[i].data || ctx->inputs[i].peers) return mgk::set_error(ctx, "an input has data at setup");
  for (int i = 0; i < ctx->num_outputs; ++i)
    if (ctx->outputs[i].data || ctx->outputs[i].peers) return mgk::set_error(ctx, "an output has data at setup");
  seen.n_in = ctx->num_inputs;
  seen.n_out = ctx->num_outputs;
  std::memcpy(seen.in, ctx->inputs, sizeof(mgk_tensor) * seen.n_in);
  std::memcpy(seen.out, ctx->outputs, sizeof(mgk_tensor) * seen.n_out);
  return simple::setup(ctx);
}

MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { simple::teardown(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int n_in, const mgk_tensor* out, int n_out,
                       cudaStream_t s) {
  if (compare(ctx, "inputs", seen.in, seen.n_in, in, n_in) || compare(ctx, "outputs", seen.out, seen.n_out, out, n_out))
    return 1;
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));
  MGK_CUDA_TRY(ctx, simple::sum(out[0].dtype, in[0].peers, ctx->world_size, 0, out[0].data, out[0].numel, s));
  return 0;
}
