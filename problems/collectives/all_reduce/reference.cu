// Reference: NCCL all-reduce (sum), out of place.
#include "mgk/reference.h"

MGK_EXPORT int mgk_setup(mgk_ctx*) { return 0; }
MGK_EXPORT void mgk_teardown(mgk_ctx*) {}

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  MGK_NCCL_TRY(ctx, ncclAllReduce(in[0].data, out[0].data, in[0].numel, mgk::nccl_type(in[0].dtype), ncclSum,
                                  mgk::comm(ctx), s));
  return 0;
}

// y[i] = sum over ranks of x_r[i]; the bound scales with sum |x_r[i]|.
MGK_EXPORT int mgk_oracle(mgk_ctx* ctx, const mgk_oracle_args* a, cudaStream_t s) {
  MGK_CUDA_TRY(ctx, mgk::oracle::sum(a->gens[0], ctx->world_size, [] __device__(int64_t i) { return i; },
                                     a->expected[0], a->scale[0], a->outputs[0].numel, s));
  return 0;
}
