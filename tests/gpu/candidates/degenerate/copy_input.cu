// Degenerate, for any problem: output 0 gets as many bytes of input 0 as fit, the rest of it
// and every other output zeros. It must fail everywhere.
#include "mgk/solution.h"

MGK_EXPORT int mgk_setup(mgk_ctx*) { return 0; }
MGK_EXPORT void mgk_teardown(mgk_ctx*) {}

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int n_in, const mgk_tensor* out, int n_out,
                       cudaStream_t s) {
  for (int o = 0; o < n_out; ++o) MGK_CUDA_TRY(ctx, cudaMemsetAsync(out[o].data, 0, mgk::nbytes(out[o]), s));
  if (n_in > 0 && n_out > 0) {
    const size_t bytes = mgk::nbytes(in[0]) < mgk::nbytes(out[0]) ? mgk::nbytes(in[0]) : mgk::nbytes(out[0]);
    if (bytes) MGK_CUDA_TRY(ctx, cudaMemcpyAsync(out[0].data, in[0].data, bytes, cudaMemcpyDeviceToDevice, s));
  }
  return 0;
}
