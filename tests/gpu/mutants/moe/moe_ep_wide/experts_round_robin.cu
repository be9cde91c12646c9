// Mutant of tests/gpu/candidates/moe/moe_ep_wide.cu. Class: a wrong group layout (strided instead of contiguous expert placement).
// Expert e taken to live on EP member e % G instead of e / EL: round-robin placement, the other common layout. Same as the right one where G = 1.
// The plain candidate's code (moe_plain.cuh) with bug 4 of ../moe_plain_mutable.cuh.
#define MOE_MUTANT 4
#include "../moe_plain_mutable.cuh"

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) { return moe_plain::setup(ctx); }
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { plain::teardown(ctx); }
MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  return moe_plain::run(ctx, in, out, s);
}
