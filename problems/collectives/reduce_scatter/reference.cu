// Reference: NCCL reduce-scatter (sum): y_r[i] = sum over s of x_s[r*C + i].
#include "mgk/reference.h"

MGK_EXPORT int mgk_setup(mgk_ctx*) { return 0; }
MGK_EXPORT void mgk_teardown(mgk_ctx*) {}

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  MGK_NCCL_TRY(ctx, ncclReduceScatter(in[0].data, out[0].data, out[0].numel, mgk::nccl_type(out[0].dtype), ncclSum,
                                      mgk::comm(ctx), s));
  return 0;
}

MGK_EXPORT int mgk_oracle(mgk_ctx* ctx, const mgk_oracle_args* a, cudaStream_t s) {
  int64_t c = a->outputs[0].numel, base = int64_t(ctx->rank) * c;
  MGK_CUDA_TRY(ctx, mgk::oracle::sum(a->gens[0], ctx->world_size, [=] __device__(int64_t i) { return base + i; },
                                     a->expected[0], a->scale[0], c, s));
  return 0;
}
