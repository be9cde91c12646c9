// The exported reference of the expert-parallel MoE forwards (fused_moe_fwd, moe_ep_balanced,
// moe_ep_wide, moe_ep_narrow): NCCL (counts all-gather, all-to-all-v dispatch and combine as
// grouped send/recv) + cuBLASLt (router, one MLP GEMM chain over every row this rank
// received) + CUB (the expert-major permutation), see moe_common.cuh; the oracle is
// moe_oracle.cuh. The problems differ only in their dims (E, G, EL, K). A reference.cu that
// defines MOE_LORA 1 before the include gets fused_moe_fwd_lora's MLP (moe::LoraMlp) and
// oracle instead; the others are unchanged.
#pragma once
#include <type_traits>

#include "moe_common.cuh"
#include "moe_oracle.cuh"

#ifndef MOE_LORA
#define MOE_LORA 0
#endif

namespace {
struct State {
  moe::Path path;
  std::conditional_t<bool(MOE_LORA), moe::LoraMlp, moe::Mlp> mlp;
};
State& state(mgk_ctx* ctx) { return *static_cast<State*>(ctx->state); }
}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  auto* s = new State;
  ctx->state = s;
  if (s->path.setup(ctx)) return 1;
  return s->mlp.setup(ctx, s->path.d);
}

MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { delete &state(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t st) {
  State& s = state(ctx);
  moe::Splits splits;
  if (s.path.route_and_dispatch(ctx, in, splits, st)) return 1;
  if (s.mlp.run(ctx, s.path, in, splits.received, st)) return 1;
  return s.path.combine(ctx, splits, out[0].data, st);
}

MGK_EXPORT int mgk_oracle(mgk_ctx* ctx, const mgk_oracle_args* a, cudaStream_t st) {
  return moe::oracle<bool(MOE_LORA)>(ctx, a, state(ctx).path.blas, st);
}
