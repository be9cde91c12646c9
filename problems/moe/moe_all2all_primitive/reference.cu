// Reference: torch's all_to_all_single with equal splits, as NCCL point-to-point in one
// group: rank R sends its row block p to rank p and receives rank p's row block R into its
// row block p.
#include "mgk/oracle.cuh"
#include "mgk/reference.h"

MGK_EXPORT int mgk_setup(mgk_ctx*) { return 0; }
MGK_EXPORT void mgk_teardown(mgk_ctx*) {}

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t st) {
  const int W = ctx->world_size;
  const size_t block = size_t(mgk::dim(ctx, "C") * mgk::dim(ctx, "N"));
  const size_t bytes = block * mgk::dtype_size(in[0].dtype);
  const ncclDataType_t t = mgk::nccl_type(in[0].dtype);
  ncclComm_t comm = mgk::comm(ctx);
  if (!comm) {  // bench/compute: the local part alone, the own block kept in place
    MGK_CUDA_TRY(ctx, cudaMemcpyAsync(static_cast<char*>(out[0].data) + ctx->rank * bytes,
                                      static_cast<const char*>(in[0].data) + ctx->rank * bytes, bytes,
                                      cudaMemcpyDeviceToDevice, st));
    return 0;
  }
  MGK_NCCL_TRY(ctx, ncclGroupStart());
  for (int p = 0; p < W; ++p) {
    MGK_NCCL_TRY(ctx, ncclSend(static_cast<const char*>(in[0].data) + p * bytes, block, t, p, comm, st));
    MGK_NCCL_TRY(ctx, ncclRecv(static_cast<char*>(out[0].data) + p * bytes, block, t, p, comm, st));
  }
  MGK_NCCL_TRY(ctx, ncclGroupEnd());
  return 0;
}

// Output element i of rank R sits in row block s = i / (C N): it is element (i mod C N) of
// rank s's row block R, regenerated.
MGK_EXPORT int mgk_oracle(mgk_ctx* ctx, const mgk_oracle_args* a, cudaStream_t st) {
  const int64_t block = mgk::dim(ctx, "C") * mgk::dim(ctx, "N"), r = ctx->rank;
  MGK_CUDA_TRY(ctx, mgk::oracle::copy(
                        a->gens[0],
                        [=] __device__(int64_t i) { return mgk::oracle::Source{int(i / block), r * block + i % block}; },
                        a->expected[0], a->outputs[0].numel, st));
  return 0;
}
