// Mutant of tests/gpu/candidates/moe/moe_ep_balanced.cu. Class: routing weights renormalised.
// The top-K probabilities are divided by their sum (Mixtral/DeepSeek norm_topk_prob), where the statement says they are not renormalised.
// The plain candidate's code (moe_plain.cuh) with bug 1 of ../moe_plain_mutable.cuh.
#define MOE_MUTANT 1
#include "../moe_plain_mutable.cuh"

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) { return moe_plain::setup(ctx); }
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { plain::teardown(ctx); }
MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  return moe_plain::run(ctx, in, out, s);
}
