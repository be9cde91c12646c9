// Reference: ParallelKernelBench's list-form all_to_all (heads scattered, positions
// gathered) at library speed: one vectorised strided copy packs the W head groups of x
// into contiguous chunks (what tensor_split(...).contiguous() does), one NCCL group of sends
// and receives exchanges them, and one vectorised strided copy puts rank s's positions at
// [s T, (s + 1) T) of every batch (the torch.cat along the sequence).
#include <algorithm>

#include "mgk/reference.h"
#include "../ulysses_exchange.cuh"

namespace {

// send: W slots; slot d: x's heads [d HL, (d + 1) HL), B x T x HL x D
// recv: W slots; slot s: rank s's B x T x HL x D for this rank's heads
using State = sp::Staging;

State& state(mgk_ctx* ctx) { return *static_cast<State*>(ctx->state); }

}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  auto* s = new State;
  ctx->state = s;
  MGK_CUDA_TRY(ctx, s->allocate(ctx->world_size, size_t(ctx->inputs[0].numel / ctx->world_size) *
                                                      mgk::dtype_size(ctx->inputs[0].dtype)));
  return 0;
}

MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { delete &state(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t st) {
  State& s = state(ctx);
  const int w = ctx->world_size;
  const int64_t B = in[0].shape[0], T = in[0].shape[1], H = in[0].shape[2], D = in[0].shape[3];
  const int64_t elt = mgk::dtype_size(in[0].dtype), HL = H / w, piece = HL * D * elt;  // one token's head group
  const auto slot = int64_t(s.slot);
  // Pack: slot d [token][.] = x[token][d HL ..]: a = d, b = token (b, t).
  MGK_CUDA_TRY(ctx, sp::copy3d(in[0].data, piece, H * D * elt, s.send, slot, piece, w, B * T, piece, st));
  if (int rc = sp::exchange(ctx, s.send, s.slot, s.recv, s.slot, size_t(B * T * HL * D), in[0].dtype, st)) return rc;
  // Unpack: y[b][p T + t] = slot p [b][t]: a = b, b = p, one batch's T x HL x D a piece.
  const int64_t run = T * piece;
  MGK_CUDA_TRY(ctx, sp::copy3d(s.recv, run, slot, out[0].data, w * run, run, B, w, run, st));
  return 0;
}

// y[b][s T + t][h][d] = x_s[b][t][r HL + h][d].
MGK_EXPORT int mgk_oracle(mgk_ctx* ctx, const mgk_oracle_args* a, cudaStream_t st) {
  const int64_t T = a->inputs[0].shape[1], H = a->inputs[0].shape[2], D = a->inputs[0].shape[3];
  const int64_t w = ctx->world_size, HL = H / w, r = ctx->rank;
  MGK_CUDA_TRY(ctx, mgk::oracle::copy(
                        a->gens[0],
                        [=] __device__(int64_t i) {
                          const int64_t d = i % D, h = i / D % HL, p = i / (D * HL) % (w * T), b = i / (D * HL * w * T);
                          const int64_t s = p / T, t = p % T;
                          return mgk::oracle::Source{int(s), ((b * T + t) * H + r * HL + h) * D + d};
                        },
                        a->expected[0], a->outputs[0].numel, st));
  return 0;
}
