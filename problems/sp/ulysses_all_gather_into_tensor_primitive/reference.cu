// Reference: one ncclAllGather straight into the output. Stacking along dimension 0 in rank
// order is exactly the all-gather's layout, so there is nothing to copy around it
// (ParallelKernelBench's all_gather_into_tensor).
#include "mgk/reference_kit.h"

namespace {

struct AllGatherIntoTensor : mgk::Reference {
  using Reference::Reference;

  int run(const mgk_tensor* in, const mgk_tensor* out, cudaStream_t s) {
    MGK_NCCL_STEP(ctx, ncclAllGather(in[0].data, out[0].data, in[0].numel, mgk::nccl_type(in[0].dtype), comm(), s));
    return 0;
  }

  // y[s M + m][n] = x_s[m][n]: element i of y is element i mod (M N) of rank i / (M N)'s x.
  int oracle(const mgk_oracle_args* a, cudaStream_t s) {
    const int64_t n = a->inputs[0].numel;
    MGK_CUDA_TRY(ctx, mgk::oracle::copy(
                          a->gens[0], [=] __device__(int64_t i) { return mgk::oracle::Source{int(i / n), i % n}; },
                          a->expected[0], a->outputs[0].numel, s));
    return 0;
  }
};

}  // namespace

MGK_REFERENCE(AllGatherIntoTensor)
