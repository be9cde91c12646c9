// Plain (plain_mlp.cuh's zero_run): after a barrier, rank 0's parameters pulled from its
// symmetric inputs, this rank's gradient in fp32 into symmetric memory, a barrier, Adam in
// fp32 on this rank's shard of the mean gradient pulled from every peer, a barrier, and every
// rank's updated shard pulled into the full parameters.
#include "../plain_mlp.cuh"

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) { return plain_mlp::zero_setup(ctx); }
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { plain::teardown(ctx); }
MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  return plain_mlp::zero_run(ctx, in, out, s);
}
