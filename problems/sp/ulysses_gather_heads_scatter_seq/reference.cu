// Reference: ParallelKernelBench's zero padding of the sequence to a multiple of W, its
// list-form all_to_all (positions scattered, heads gathered) and torch.cat along the heads,
// at library speed. The pack buffer is zeroed once at setup and only its valid positions
// are ever written, so the padding costs nothing per call; one vectorised strided copy
// packs the positions of each destination (per batch TL x H x D contiguous elements), one
// NCCL group of sends and receives exchanges them (the padded positions too, as in PKB),
// and one vectorised strided copy lays the W head groups side by side.
#include <algorithm>

#include "mgk/reference_kit.h"
#include "../ulysses_exchange.cuh"

namespace {

// send: W slots; slot d: positions [d TL, (d + 1) TL) of x, B x TL x H x D, zero past T
// recv: W slots; slot s: rank s's B x TL x H x D for this rank's positions
struct GatherHeadsScatterSeq : sp::StagedReference {
  using StagedReference::StagedReference;

  int setup() {
    if (int rc = allocate_staging(ctx->outputs[0])) return rc;
    MGK_CUDA_TRY(ctx, cudaMemset(staging.send, 0, staging.slot * world()));  // the padding, for good
    return 0;
  }

  int run(const mgk_tensor* in, const mgk_tensor* out, cudaStream_t st) {
    const int w = world();
    const int64_t B = in[0].shape[0], T = in[0].shape[1], H = in[0].shape[2], D = in[0].shape[3];
    const int64_t TL = out[0].shape[1], elt = mgk::dtype_size(in[0].dtype), row = H * D * elt;  // one position
    const auto slot = int64_t(staging.slot);
    // Pack: slot d [b][t] = x[b][d TL + t] for d TL + t < T: destinations [0, full) whole, then
    // rank `full` gets the `rest` positions left (when T % W != 0), the ones after it nothing.
    const int64_t full = std::min<int64_t>(w, T / TL), rest = T - full * TL;
    MGK_CUDA_TRY(ctx, sp::copy3d(in[0].data, TL * row, T * row, staging.send, slot, TL * row, full, B, TL * row, st));
    if (full < w && rest > 0)
      MGK_CUDA_TRY(ctx, sp::copy3d(static_cast<const char*>(in[0].data) + full * TL * row, 0, T * row,
                                   static_cast<char*>(staging.send) + full * slot, 0, TL * row, 1, B, rest * row, st));
    if (int rc = exchange(size_t(B * TL * H * D), in[0].dtype, st)) return rc;
    // Unpack: y[b][t][p H ..] = slot p [b][t]: a = (b, t), b = p.
    MGK_CUDA_TRY(ctx, sp::copy3d(staging.recv, row, slot, out[0].data, w * row, row, B * TL, w, row, st));
    return 0;
  }

  // y[b][t][s H + h][d] = x_s[b][r TL + t][h][d], or 0 where r TL + t >= T.
  int oracle(const mgk_oracle_args* a, cudaStream_t st) {
    const int64_t T = a->inputs[0].shape[1], H = a->inputs[0].shape[2], D = a->inputs[0].shape[3];
    const int64_t TL = a->outputs[0].shape[1], w = world(), r = rank();
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
};

}  // namespace

MGK_REFERENCE(GatherHeadsScatterSeq)
