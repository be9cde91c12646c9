// Mutant of tests/gpu/candidates/moe/fused_moe_fwd.cu. Class: a missing term (a bias).
// The down projection is applied without its bias, as in bias-free Llama-style MLPs.
// The plain candidate's code (moe_plain.cuh) with bug 3 of ../moe_plain_mutable.cuh.
#define MOE_MUTANT 3
#include "../moe_plain_mutable.cuh"

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) { return moe_plain::setup(ctx); }
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { plain::teardown(ctx); }
MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  return moe_plain::run(ctx, in, out, s);
}
