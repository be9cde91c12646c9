// Reference: ParallelKernelBench's zero padding of the sequence to a multiple of W, its
// list-form all_to_all (positions scattered, heads gathered) and torch.cat along the heads,
// at library speed. The pack buffer is zeroed once at setup and only its valid positions
// are ever written, so the padding costs nothing per call; one vectorised strided copy
// packs the positions of each destination (per batch TL x H x D contiguous elements), one
// NCCL group of sends and receives exchanges them (the padded positions too, as in PKB),
// and one vectorised strided copy lays the W head groups side by side.
#include <algorithm>

#include "mgk/oracle_gemm.cuh"
#include "mgk/reference.h"
#include "../ulysses_exchange.cuh"

namespace {

// send: W slots; slot d: positions [d TL, (d + 1) TL) of x, B x TL x H x D, zero past T
// recv: W slots; slot s: rank s's B x TL x H x D for this rank's positions
using State = sp::Staging;

State& state(mgk_ctx* ctx) { return *static_cast<State*>(ctx->state); }

}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  auto* s = new State;
  ctx->state = s;
  MGK_CUDA_TRY(ctx, s->allocate(ctx->world_size, size_t(ctx->outputs[0].numel / ctx->world_size) *
                                                      mgk::dtype_size(ctx->outputs[0].dtype)));
  MGK_CUDA_TRY(ctx, cudaMemset(s->send, 0, s->slot * ctx->world_size));  // the padding, for good
  return 0;
}

MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { delete &state(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t st) {
  State& s = state(ctx);
  const int w = ctx->world_size;
  const int64_t B = in[0].shape[0], T = in[0].shape[1], H = in[0].shape[2], D = in[0].shape[3];
  const int64_t TL = out[0].shape[1], elt = mgk::dtype_size(in[0].dtype), row = H * D * elt;  // one position
  const auto slot = int64_t(s.slot);
  // Pack: slot d [b][t] = x[b][d TL + t] for d TL + t < T: destinations [0, full) whole, then
  // rank `full` gets the `rest` positions left (when T % W != 0), the ones after it nothing.
  const int64_t full = std::min<int64_t>(w, T / TL), rest = T - full * TL;
  MGK_CUDA_TRY(ctx, sp::copy3d(in[0].data, TL * row, T * row, s.send, slot, TL * row, full, B, TL * row, st));
  if (full < w && rest > 0)
    MGK_CUDA_TRY(ctx, sp::copy3d(static_cast<const char*>(in[0].data) + full * TL * row, 0, T * row,
                                      static_cast<char*>(s.send) + full * slot, 0, TL * row, 1, B, rest * row, st));
  if (int rc = sp::exchange(ctx, s.send, s.slot, s.recv, s.slot, size_t(B * TL * H * D), in[0].dtype, st)) return rc;
  // Unpack: y[b][t][p H ..] = slot p [b][t]: a = (b, t), b = p.
  MGK_CUDA_TRY(ctx, sp::copy3d(s.recv, row, slot, out[0].data, w * row, row, B * TL, w, row, st));
  return 0;
}

// y[b][t][s H + h][d] = x_s[b][r TL + t][h][d], or 0 where r TL + t >= T.
MGK_EXPORT int mgk_oracle(mgk_ctx* ctx, const mgk_oracle_args* a, cudaStream_t st) {
  const int64_t T = a->inputs[0].shape[1], H = a->inputs[0].shape[2], D = a->inputs[0].shape[3];
  const int64_t TL = a->outputs[0].shape[1], w = ctx->world_size, r = ctx->rank;
  const mgk_input_gen g = a->gens[0];
  auto* expected = static_cast<double*>(a->expected[0]);
  MGK_CUDA_TRY(ctx, mgk::oracle::for_each(
                        a->outputs[0].numel,
                        [=] __device__(int64_t i) {
                          const int64_t d = i % D, k = i / D % (w * H), t = i / (D * w * H) % TL, b = i / (D * w * H * TL);
                          const int64_t s = k / H, h = k % H, pos = r * TL + t;
                          expected[i] = pos < T ? mgk::gen_value(g, int(s), ((b * T + pos) * H + h) * D + d) : 0.0;
                        },
                        st));
  return 0;
}
