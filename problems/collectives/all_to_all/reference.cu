// Reference: all-to-all with NCCL point-to-point: y_r[s*C + i] = x_s[r*C + i].
#include "mgk/reference.h"

MGK_EXPORT int mgk_setup(mgk_ctx*) { return 0; }
MGK_EXPORT void mgk_teardown(mgk_ctx*) {}

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  int w = ctx->world_size;
  int64_t c = in[0].numel / w;
  size_t bytes = c * mgk::dtype_size(in[0].dtype);
  ncclDataType_t t = mgk::nccl_type(in[0].dtype);
  MGK_NCCL_TRY(ctx, ncclGroupStart());
  for (int p = 0; p < w; ++p) {
    MGK_NCCL_TRY(ctx, ncclSend(static_cast<const char*>(in[0].data) + p * bytes, c, t, p, mgk::comm(ctx), s));
    MGK_NCCL_TRY(ctx, ncclRecv(static_cast<char*>(out[0].data) + p * bytes, c, t, p, mgk::comm(ctx), s));
  }
  MGK_NCCL_TRY(ctx, ncclGroupEnd());
  return 0;
}

MGK_EXPORT int mgk_oracle(mgk_ctx* ctx, const mgk_oracle_args* a, cudaStream_t s) {
  int64_t c = a->outputs[0].numel / ctx->world_size, r = ctx->rank;
  MGK_CUDA_TRY(ctx, mgk::oracle::copy(a->gens[0], [=] __device__(int64_t i) { return mgk::oracle::Source{int(i / c), r * c + i % c}; },
                                      a->expected[0], a->outputs[0].numel, s));
  return 0;
}
