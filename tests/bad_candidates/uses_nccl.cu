// Flaw: calls NCCL (the baseline it is supposed to replace). Refused before compiling.
#include <nccl.h>

#include "mgk/solution.h"

MGK_EXPORT int mgk_setup(mgk_ctx*) { return 0; }
MGK_EXPORT void mgk_teardown(mgk_ctx*) {}
MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  ncclAllReduce(in[0].data, out[0].data, in[0].numel, ncclBfloat16, ncclSum, static_cast<ncclComm_t>(ctx->nccl_comm), s);
  return 0;
}
