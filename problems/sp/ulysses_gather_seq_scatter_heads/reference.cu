// Reference: ParallelKernelBench's list-form all_to_all (heads scattered, positions
// gathered) at library speed: one vectorised strided copy packs the W head groups of x
// into contiguous chunks (what tensor_split(...).contiguous() does), one NCCL group of sends
// and receives exchanges them, and one vectorised strided copy puts rank s's positions at
// [s T, (s + 1) T) of every batch (the torch.cat along the sequence).
#include <algorithm>

#include "mgk/reference_kit.h"
#include "../ulysses_exchange.cuh"

namespace {

// send: W slots; slot d: x's heads [d HL, (d + 1) HL), B x T x HL x D
// recv: W slots; slot s: rank s's B x T x HL x D for this rank's heads
struct GatherSeqScatterHeads : sp::StagedReference {
  using StagedReference::StagedReference;

  int setup() { return allocate_staging(ctx->inputs[0]); }

  int run(const mgk_tensor* in, const mgk_tensor* out, cudaStream_t st) {
    const int w = world();
    const int64_t B = in[0].shape[0], T = in[0].shape[1], H = in[0].shape[2], D = in[0].shape[3];
    const int64_t elt = mgk::dtype_size(in[0].dtype), HL = H / w, piece = HL * D * elt;  // one token's head group
    const auto slot = int64_t(staging.slot);
    // Pack: slot d [token][.] = x[token][d HL ..]: a = d, b = token (b, t).
    MGK_CUDA_TRY(ctx, sp::copy3d(in[0].data, piece, H * D * elt, staging.send, slot, piece, w, B * T, piece, st));
    if (int rc = exchange(size_t(B * T * HL * D), in[0].dtype, st)) return rc;
    // Unpack: y[b][p T + t] = slot p [b][t]: a = b, b = p, one batch's T x HL x D a piece.
    const int64_t run = T * piece;
    MGK_CUDA_TRY(ctx, sp::copy3d(staging.recv, run, slot, out[0].data, w * run, run, B, w, run, st));
    return 0;
  }

  // y[b][s T + t][h][d] = x_s[b][t][r HL + h][d].
  int oracle(const mgk_oracle_args* a, cudaStream_t st) {
    const int64_t T = a->inputs[0].shape[1], H = a->inputs[0].shape[2], D = a->inputs[0].shape[3];
    const int64_t w = world(), HL = H / w, r = rank();
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
};

}  // namespace

MGK_REFERENCE(GatherSeqScatterHeads)
