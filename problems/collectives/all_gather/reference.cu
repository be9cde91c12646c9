// Reference: NCCL all-gather; y[s*N + i] = x_s[i].
#include "mgk/reference_kit.h"

namespace {

struct AllGather : mgk::Reference {
  using Reference::Reference;

  int run(const mgk_tensor* in, const mgk_tensor* out, cudaStream_t s) {
    MGK_NCCL_TRY(ctx, ncclAllGather(in[0].data, out[0].data, in[0].numel, mgk::nccl_type(in[0].dtype), comm(), s));
    return 0;
  }

  int oracle(const mgk_oracle_args* a, cudaStream_t s) {
    int64_t n = a->inputs[0].numel;
    MGK_CUDA_TRY(ctx, mgk::oracle::copy(a->gens[0], [=] __device__(int64_t i) { return mgk::oracle::Source{int(i / n), i % n}; },
                                        a->expected[0], a->outputs[0].numel, s));
    return 0;
  }
};

}  // namespace

MGK_REFERENCE(AllGather)
