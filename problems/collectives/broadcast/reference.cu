// Reference: NCCL broadcast from rank 0 into y on every rank.
#include "mgk/reference.h"

MGK_EXPORT int mgk_setup(mgk_ctx*) { return 0; }
MGK_EXPORT void mgk_teardown(mgk_ctx*) {}

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  MGK_NCCL_TRY(ctx, ncclBroadcast(in[0].data, out[0].data, out[0].numel, mgk::nccl_type(out[0].dtype), 0,
                                  mgk::comm(ctx), s));
  return 0;
}

MGK_EXPORT int mgk_oracle(mgk_ctx* ctx, const mgk_oracle_args* a, cudaStream_t s) {
  MGK_CUDA_TRY(ctx, mgk::oracle::copy(a->gens[0], [] __device__(int64_t i) { return mgk::oracle::Source{0, i}; },
                                      a->expected[0], a->outputs[0].numel, s));
  return 0;
}
