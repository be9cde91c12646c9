// Reference: NCCL reduce (sum) to rank 0; other ranks have an empty output.
#include "mgk/reference_kit.h"

namespace {

struct Reduce : mgk::Reference {
  using Reference::Reference;

  int run(const mgk_tensor* in, const mgk_tensor* out, cudaStream_t s) {
    MGK_NCCL_TRY(ctx,
                 ncclReduce(in[0].data, out[0].data, in[0].numel, mgk::nccl_type(in[0].dtype), ncclSum, 0, comm(), s));
    return 0;
  }

  int oracle(const mgk_oracle_args* a, cudaStream_t s) {
    MGK_CUDA_TRY(ctx, mgk::oracle::sum(a->gens[0], world(), [] __device__(int64_t i) { return i; }, a->expected[0],
                                       a->scale[0], a->outputs[0].numel, s));
    return 0;
  }
};

}  // namespace

MGK_REFERENCE(Reduce)
