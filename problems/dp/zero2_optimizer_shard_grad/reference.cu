// Reference: ZeRO-2 as ParallelKernelBench writes it (dp_zero.cuh): broadcast of rank 0's
// flat parameters, the MLP's forward and backward on cuBLASLt, ncclReduceScatter of the flat
// gradients (zero-padded to W shards), Adam on this rank's shard, ncclAllGather of the
// updated shards.
#include "../dp_zero.cuh"

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) { return dp::zero::setup(ctx); }
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { dp::zero::teardown(ctx); }
MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t st) {
  return dp::zero::run<true>(ctx, in, out, st);
}
MGK_EXPORT int mgk_oracle(mgk_ctx* ctx, const mgk_oracle_args* a, cudaStream_t st) { return dp::zero::oracle(ctx, a, st); }
