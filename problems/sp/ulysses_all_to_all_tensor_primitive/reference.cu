// Reference: ParallelKernelBench's list-form all_to_all and torch.cat along dimension 1, at
// library speed. Row block d of x is contiguous, so NCCL sends it straight from x; the W
// received blocks land one after the other in a staging buffer, and one vectorised strided
// copy lays them side by side as y's column blocks (what the cat does, in one launch).
#include <algorithm>

#include "mgk/reference.h"
#include "../ulysses_exchange.cuh"

namespace {

struct State {
  void* recv = nullptr;  // W slots, slot s: rank s's ML x N block for this rank
  size_t slot = 0;
  ~State() { cudaFree(recv); }
};

State& state(mgk_ctx* ctx) { return *static_cast<State*>(ctx->state); }

}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  auto* s = new State;
  ctx->state = s;
  s->slot = sp::slot_bytes(size_t(ctx->outputs[0].numel / ctx->world_size) * mgk::dtype_size(ctx->outputs[0].dtype));
  MGK_CUDA_TRY(ctx, cudaMalloc(&s->recv, s->slot * ctx->world_size));
  return 0;
}

MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { delete &state(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t st) {
  State& s = state(ctx);
  const int w = ctx->world_size;
  const int64_t ML = out[0].shape[0], N = in[0].shape[1], elt = mgk::dtype_size(in[0].dtype);
  if (int rc = sp::exchange(ctx, in[0].data, size_t(ML * N * elt), s.recv, s.slot, size_t(ML * N), in[0].dtype, st)) return rc;
  // y[m][p N + n] = slot p [m][n]: a = m, b = p.
  MGK_CUDA_TRY(ctx, sp::copy3d(s.recv, N * elt, int64_t(s.slot), out[0].data, w * N * elt, N * elt, ML, w, N * elt, st));
  return 0;
}

// y[m][s N + n] = x_s[r ML + m][n].
MGK_EXPORT int mgk_oracle(mgk_ctx* ctx, const mgk_oracle_args* a, cudaStream_t st) {
  const int64_t ML = a->outputs[0].shape[0], N = a->inputs[0].shape[1], r = ctx->rank, w = ctx->world_size;
  MGK_CUDA_TRY(ctx, mgk::oracle::copy(
                        a->gens[0],
                        [=] __device__(int64_t i) {
                          const int64_t m = i / (w * N), s = i / N % w, n = i % N;
                          return mgk::oracle::Source{int(s), (r * ML + m) * N + n};
                        },
                        a->expected[0], a->outputs[0].numel, st));
  return 0;
}
