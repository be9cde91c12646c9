// Reference: ParallelKernelBench's list-form all_to_all and torch.cat along dimension 1, at
// library speed. Row block d of x is contiguous, so NCCL sends it straight from x; the W
// received blocks land one after the other in a staging buffer, and one vectorised strided
// copy lays them side by side as y's column blocks (what the cat does, in one launch).
#include <algorithm>

#include "mgk/reference_kit.h"
#include "../ulysses_exchange.cuh"

namespace {

struct AllToAllTensor : mgk::Reference {
  using Reference::Reference;
  mgk::DeviceBuffer<char> recv;  // W slots, slot s: rank s's ML x N block for this rank
  size_t slot = 0;

  int setup() {
    slot = sp::slot_bytes(size_t(ctx->outputs[0].numel / world()) * mgk::dtype_size(ctx->outputs[0].dtype));
    MGK_CUDA_TRY(ctx, recv.allocate(int64_t(slot * world())));
    return 0;
  }

  int run(const mgk_tensor* in, const mgk_tensor* out, cudaStream_t st) {
    const int w = world();
    const int64_t ML = out[0].shape[0], N = in[0].shape[1], elt = mgk::dtype_size(in[0].dtype);
    if (int rc = sp::exchange(ctx, in[0].data, size_t(ML * N * elt), recv, slot, size_t(ML * N), in[0].dtype, st))
      return rc;
    // y[m][p N + n] = slot p [m][n]: a = m, b = p.
    MGK_CUDA_TRY(ctx, sp::copy3d(recv, N * elt, int64_t(slot), out[0].data, w * N * elt, N * elt, ML, w, N * elt, st));
    return 0;
  }

  // y[m][s N + n] = x_s[r ML + m][n].
  int oracle(const mgk_oracle_args* a, cudaStream_t st) {
    const int64_t ML = a->outputs[0].shape[0], N = a->inputs[0].shape[1], r = rank(), w = world();
    MGK_CUDA_TRY(ctx, mgk::oracle::copy(
                          a->gens[0],
                          [=] __device__(int64_t i) {
                            const int64_t m = i / (w * N), s = i / N % w, n = i % N;
                            return mgk::oracle::Source{int(s), (r * ML + m) * N + n};
                          },
                          a->expected[0], a->outputs[0].numel, st));
    return 0;
  }
};

}  // namespace

MGK_REFERENCE(AllToAllTensor)
