// Reference: ParallelKernelBench's qkv all-to-all (the last dimension viewed as [3, H D],
// its H D split into W chunks, positions gathered) at library speed: one vectorised strided
// copy packs each destination's three pieces per position (q, k and v heads
// [d HL, (d + 1) HL)) into a contiguous chunk, one NCCL group of sends and receives
// exchanges them, and one vectorised strided copy puts rank s's positions at [s T, (s + 1) T)
// of every batch.
#include <algorithm>

#include "mgk/reference_kit.h"
#include "../ulysses_exchange.cuh"

namespace {

// send: W slots; slot d: [b][t][j][C] = qkv[b][t][j H D + d C ..], C = HL D
// recv: W slots; slot s: rank s's B x T x 3 C for this rank's heads
struct GatherSeqScatterHeadsQkv : sp::StagedReference {
  using StagedReference::StagedReference;

  int setup() { return allocate_staging(ctx->inputs[0]); }

  int run(const mgk_tensor* in, const mgk_tensor* out, cudaStream_t st) {
    const int w = world();
    const int64_t B = in[0].shape[0], T = in[0].shape[1], HD = in[0].shape[2] / 3, elt = mgk::dtype_size(in[0].dtype);
    const int64_t piece = HD / w * elt;  // C elements: one of q, k, v of one position, for one rank
    const auto slot = int64_t(staging.slot);
    // Pack: slot d [(b, t, j)] = qkv[(b, t, j)][d C ..]: a = d, b = (b, t, j), rows H D apart.
    MGK_CUDA_TRY(ctx, sp::copy3d(in[0].data, piece, HD * elt, staging.send, slot, piece, w, B * T * 3, piece, st));
    if (int rc = exchange(size_t(B * T * 3 * HD / w), in[0].dtype, st)) return rc;
    // Unpack: y[b][p T + t] = slot p [b][t]: a = b, b = p, one batch's T x 3 C a piece.
    const int64_t run = T * 3 * piece;
    MGK_CUDA_TRY(ctx, sp::copy3d(staging.recv, run, slot, out[0].data, w * run, run, B, w, run, st));
    return 0;
  }

  // y[b][s T + t][j C + c] = qkv_s[b][t][j H D + r C + c].
  int oracle(const mgk_oracle_args* a, cudaStream_t st) {
    const int64_t T = a->inputs[0].shape[1], HD = a->inputs[0].shape[2] / 3, w = world(), C = HD / w;
    const int64_t r = rank();
    MGK_CUDA_TRY(ctx, mgk::oracle::copy(
                          a->gens[0],
                          [=] __device__(int64_t i) {
                            const int64_t k = i % (3 * C), p = i / (3 * C) % (w * T), b = i / (3 * C * w * T);
                            const int64_t s = p / T, t = p % T, j = k / C, c = k % C;
                            return mgk::oracle::Source{int(s), (b * T + t) * 3 * HD + j * HD + r * C + c};
                          },
                          a->expected[0], a->outputs[0].numel, st));
    return 0;
  }
};

}  // namespace

MGK_REFERENCE(GatherSeqScatterHeadsQkv)
