// Mutant of tests/gpu/candidates/moe/moe_ep_narrow.cu. Class: off by one in a loop bound (the softmax denominator).
// The router softmax sums exp over experts 1..E-1, as a loop that seeded its max from expert 0 and then started at 1 would: every probability too large.
// The plain candidate's code (moe_plain.cuh) with bug 5 of ../moe_plain_mutable.cuh. (Placement round-robin is no bug here: EL = 1, so e % G = e / EL.)
#define MOE_MUTANT 5
#include "../moe_plain_mutable.cuh"

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) { return moe_plain::setup(ctx); }
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { plain::teardown(ctx); }
MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  return moe_plain::run(ctx, in, out, s);
}
