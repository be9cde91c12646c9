// Reference: ParallelKernelBench's three in-place all-reduces (SUM, bf16), issued as one NCCL
// group so that they cost one launch rather than three; NCCL rounds every partial sum to bf16
// as PyTorch's all_reduce does.
#include "mgk/reference_kit.h"

namespace {

struct LoraGradAllReduce : mgk::Reference {
  using Reference::Reference;

  // out[k] is in[k]'s buffer (in place); ctx->num_outputs of them (the n_out of mgk_run).
  int run(const mgk_tensor*, const mgk_tensor* out, cudaStream_t st) {
    ncclComm_t comm = this->comm();
    if (!comm) return 0;  // bench/compute: no compute part, the sum is all communication
    MGK_NCCL_TRY(ctx, ncclGroupStart());
    for (int k = 0; k < ctx->num_outputs; ++k)
      MGK_NCCL_TRY(ctx, ncclAllReduce(out[k].data, out[k].data, size_t(out[k].numel), mgk::nccl_type(out[k].dtype),
                                      ncclSum, comm, st));
    MGK_NCCL_TRY(ctx, ncclGroupEnd());
    return 0;
  }

  // Each output element: the fp64 sum over every rank of the regenerated (original) gradient
  // element, scale = the sum of the terms' magnitudes, which bounds every partial sum of any
  // reduction order (the tolerance's factor W counts those partial sums' roundings).
  int oracle(const mgk_oracle_args* a, cudaStream_t st) {
    for (int k = 0; k < a->n_out; ++k)
      MGK_CUDA_TRY(ctx, mgk::oracle::sum(a->gens[k], world(), [] __device__(int64_t i) { return i; },
                                         a->expected[k], a->scale[k], a->outputs[k].numel, st));
    return 0;
  }
};

}  // namespace

MGK_REFERENCE(LoraGradAllReduce)
