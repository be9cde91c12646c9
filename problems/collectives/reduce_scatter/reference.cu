// Reference: NCCL reduce-scatter (sum): y_r[i] = sum over s of x_s[r*C + i].
#include "mgk/reference_kit.h"

namespace {

struct ReduceScatter : mgk::Reference {
  using Reference::Reference;

  int run(const mgk_tensor* in, const mgk_tensor* out, cudaStream_t s) {
    MGK_NCCL_TRY(ctx, ncclReduceScatter(in[0].data, out[0].data, out[0].numel, mgk::nccl_type(out[0].dtype), ncclSum,
                                        comm(), s));
    return 0;
  }

  int oracle(const mgk_oracle_args* a, cudaStream_t s) {
    int64_t c = a->outputs[0].numel, base = int64_t(rank()) * c;
    MGK_CUDA_TRY(ctx, mgk::oracle::sum(a->gens[0], world(), [=] __device__(int64_t i) { return base + i; },
                                       a->expected[0], a->scale[0], c, s));
    return 0;
  }
};

}  // namespace

MGK_REFERENCE(ReduceScatter)
