// Reference: NCCL broadcast from rank 0 into y on every rank.
#include "mgk/reference_kit.h"

namespace {

struct Broadcast : mgk::Reference {
  using Reference::Reference;

  int run(const mgk_tensor* in, const mgk_tensor* out, cudaStream_t s) {
    MGK_NCCL_TRY(ctx, ncclBroadcast(in[0].data, out[0].data, out[0].numel, mgk::nccl_type(out[0].dtype), 0, comm(), s));
    return 0;
  }

  int oracle(const mgk_oracle_args* a, cudaStream_t s) {
    MGK_CUDA_TRY(ctx, mgk::oracle::copy(a->gens[0], [] __device__(int64_t i) { return mgk::oracle::Source{0, i}; },
                                        a->expected[0], a->outputs[0].numel, s));
    return 0;
  }
};

}  // namespace

MGK_REFERENCE(Broadcast)
