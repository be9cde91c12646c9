// Flaw: counts its calls and does the work only in the calls an evaluator that checks the
// last timed call of each block would look at: the correctness trials and back-to-back
// calls (every one is checked), then the last call of each timing block; in every other
// timed call it returns at once, leaving the poisoned outputs. Its time would look several
// times faster. The evaluator checks a subset of timed calls drawn afresh for every block
// and never tells the candidate which, so this is caught (eval/timed_checks.h gives the
// odds; tests/eval/timed_checks_test.cc plays this pattern against them).
#include "../gpu/candidates/simple_common.cuh"
SIMPLE_SETUP_TEARDOWN

namespace {
// mgk eval's defaults: 3 trials, 8 back-to-back calls, then five timing blocks of
// warm-up + 20 calls (10 warm-up in the first block, 3 after).
bool predicted_checked(long long call) {
  if (call < 3 + 8) return true;
  long long t = call - 11;
  const long long blocks[] = {30, 23, 23, 23, 23};
  for (long long b : blocks) {
    if (t < b) return t == b - 1;
    t -= b;
  }
  return true;
}
long long calls = 0;
}  // namespace

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  if (!predicted_checked(calls++)) return 0;
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));
  MGK_CUDA_TRY(ctx, simple::sum(out[0].dtype, in[0].peers, ctx->world_size, 0, out[0].data, out[0].numel, s));
  return 0;
}
