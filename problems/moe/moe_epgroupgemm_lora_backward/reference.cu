// Reference: ParallelKernelBench's three in-place all-reduces (SUM, bf16), issued as one NCCL
// group so that they cost one launch rather than three; NCCL rounds every partial sum to bf16
// as PyTorch's all_reduce does.
#include "mgk/oracle.cuh"
#include "mgk/reference.h"

MGK_EXPORT int mgk_setup(mgk_ctx*) { return 0; }
MGK_EXPORT void mgk_teardown(mgk_ctx*) {}

// out[k] is in[k]'s buffer (in place).
MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor*, int, const mgk_tensor* out, int n_out, cudaStream_t st) {
  ncclComm_t comm = mgk::comm(ctx);
  if (!comm) return 0;  // bench/compute: no compute part, the sum is all communication
  MGK_NCCL_TRY(ctx, ncclGroupStart());
  for (int k = 0; k < n_out; ++k)
    MGK_NCCL_TRY(ctx, ncclAllReduce(out[k].data, out[k].data, size_t(out[k].numel), mgk::nccl_type(out[k].dtype),
                                    ncclSum, comm, st));
  MGK_NCCL_TRY(ctx, ncclGroupEnd());
  return 0;
}

// Each output element: the fp64 sum over every rank of the regenerated (original) gradient
// element, scale = the sum of the terms' magnitudes, which bounds every partial sum of any
// reduction order (the tolerance's factor W counts those partial sums' roundings).
MGK_EXPORT int mgk_oracle(mgk_ctx* ctx, const mgk_oracle_args* a, cudaStream_t st) {
  for (int k = 0; k < a->n_out; ++k)
    MGK_CUDA_TRY(ctx, mgk::oracle::sum(a->gens[k], ctx->world_size, [] __device__(int64_t i) { return i; },
                                       a->expected[k], a->scale[k], a->outputs[k].numel, st));
  return 0;
}
