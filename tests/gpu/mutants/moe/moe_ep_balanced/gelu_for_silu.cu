// Mutant of tests/gpu/candidates/moe/moe_ep_balanced.cu. Class: wrong elementwise function (activation).
// GELU instead of SiLU in the gated MLP: the other common transformer activation, written from memory.
// The plain candidate's code (moe_plain.cuh) with bug 2 of ../moe_plain_mutable.cuh.
#define MOE_MUTANT 2
#include "../moe_plain_mutable.cuh"

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) { return moe_plain::setup(ctx); }
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { plain::teardown(ctx); }
MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  return moe_plain::run(ctx, in, out, s);
}
