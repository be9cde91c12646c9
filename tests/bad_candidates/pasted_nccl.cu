// Flaw: calls NCCL under a name a macro pastes together, declared by hand, so the text it
// was written in never spells it (no include of nccl.h either): a search of that text finds
// nothing. Refused: the check reads the preprocessed source, where the name is whole (and,
// had it got that far, the built library's imports name it too). In a process that had
// NCCL loaded, the symbol would have resolved.
#include "mgk/solution.h"

#define GLUE_(a, b) a##b
#define GLUE(a, b) GLUE_(a, b)
#define LIBRARY_NAME(name) GLUE(GLUE(GLUE(n, c), GLUE(c, l)), name)

extern "C" int LIBRARY_NAME(AllReduce)(const void*, void*, size_t, int, int, void*, cudaStream_t);

MGK_EXPORT int mgk_setup(mgk_ctx*) { return 0; }
MGK_EXPORT void mgk_teardown(mgk_ctx*) {}
MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  const int bfloat16 = 9, sum = 0;  // the library's enum values
  return LIBRARY_NAME(AllReduce)(in[0].data, out[0].data, size_t(in[0].numel), bfloat16, sum, ctx->nccl_comm, s);
}
