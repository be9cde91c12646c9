// The reference of the expert-parallel MoE forwards (fused_moe_fwd, moe_ep_balanced,
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

template <bool Lora>
struct MoeForward : moe::Path {
  using Path::Path;
  const int64_t R = Lora ? dim("RK") : 0;  // the adapters' rank (LoRA only)
  std::conditional_t<Lora, moe::LoraMlp, moe::Mlp> mlp;

  int setup() {
    if (Path::setup()) return 1;
    if constexpr (Lora) return mlp.setup(ctx, d, R);
    else return mlp.setup(ctx, d);
  }

  int run(const mgk_tensor* in, const mgk_tensor* out, cudaStream_t st) {
    moe::Splits splits;
    if (route_and_dispatch(in, splits, st)) return 1;
    if (mlp.run(ctx, *this, in, splits.received, st)) return 1;
    return combine(splits, out[0].data, st);
  }

  int oracle(const mgk_oracle_args* a, cudaStream_t st) { return moe::oracle<Lora>(ctx, d, R, a, blas, st); }
};

}  // namespace

MGK_REFERENCE(MoeForward<bool(MOE_LORA)>)
