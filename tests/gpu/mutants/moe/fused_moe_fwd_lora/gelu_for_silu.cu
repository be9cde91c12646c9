// Mutant of tests/gpu/candidates/moe/fused_moe_fwd_lora.cu. Class: wrong elementwise function (activation).
// GELU instead of SiLU in the gated MLP: the other common transformer activation, written from memory.
// The plain candidate with bug 2 of ../moe_plain_mutable.cuh (its shared header).
//
// The plain candidate's description:
// Plain candidate of moe/fused_moe_fwd_lora: every owner's MLP and LoRA adapters read
// through peer pointers and applied locally (../moe_plain.cuh, Lora); no token moves.
#define MOE_MUTANT 2
#include "../moe_plain_mutable.cuh"

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) { return moe_plain::setup<true>(ctx); }
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { plain::teardown(ctx); }
MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  return moe_plain::run<true>(ctx, in, out, s);
}
