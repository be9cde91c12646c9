// Reference: NCCL all-reduce (sum), out of place.
#include "mgk/reference_kit.h"

namespace {

struct AllReduce : mgk::Reference {
  using Reference::Reference;

  int run(const mgk_tensor* in, const mgk_tensor* out, cudaStream_t s) {
    MGK_NCCL_TRY(ctx,
                 ncclAllReduce(in[0].data, out[0].data, in[0].numel, mgk::nccl_type(in[0].dtype), ncclSum, comm(), s));
    return 0;
  }

  // y[i] = sum over ranks of x_r[i]; the bound scales with sum |x_r[i]|.
  int oracle(const mgk_oracle_args* a, cudaStream_t s) {
    MGK_CUDA_TRY(ctx, mgk::oracle::sum(a->gens[0], world(), [] __device__(int64_t i) { return i; }, a->expected[0],
                                       a->scale[0], a->outputs[0].numel, s));
    return 0;
  }
};

}  // namespace

MGK_REFERENCE(AllReduce)
