// Shared by attention/ring_attention_tp and ring_attention_pp: one attention block as
// ParallelKernelBench writes it, on cuBLASLt and the causal ring of ring_common.cuh. q, k, v =
// x w_qkv^T as three cuBLASLt GEMMs over w_qkv's row blocks (bf16 outputs, PKB's F.linear
// rounding; contiguous [B, S, H, D] blocks the ring can send as they are), the ring over the
// CP group (bf16 ctx), out = ctx w_o^T (bf16). x [B, S, DM], w_qkv [3 H D, DM], w_o [DM, H D].
#pragma once
#include "mgk/cublas_check.h"
#include "mgk/lt_gemm.h"
#include "ring_common.cuh"

namespace ring {

class AttentionBlock {
 public:
  // `cp_size`: the ranks of the CP group the ring runs over.
  int setup(mgk_ctx* ctx, int64_t B, int64_t S, int64_t H, int64_t D, int64_t DM, int cp_size) {
    E_ = H * D, DM_ = DM;
    for (auto* p : {&q_, &k_, &v_, &ctx_}) MGK_CUDA_TRY(ctx, p->allocate(B * S * E_));
    MGK_CUBLAS_TRY(ctx, lt_.create());
    mgk::lt::GemmShape in{B * S, E_, DM};  // x [BS, DM] . (w block [E, DM])^T
    in.trans_b = true;
    in.align = 16;  // the k and v blocks of w_qkv start E DM elements in (E a multiple of 8)
    MGK_CUBLAS_TRY(ctx, proj_in_.plan(lt_, in));
    mgk::lt::GemmShape o{B * S, DM, E_};  // ctx [BS, E] . (w_o [DM, E])^T
    o.trans_b = true;
    o.align = 16;
    MGK_CUBLAS_TRY(ctx, proj_out_.plan(lt_, o));
    return ring_.setup(ctx, B, S, H, D, cp_size);
  }

  // out = the block of x, this rank being CP position `pos` of `cp` (null: no communication).
  int run(mgk_ctx* ctx, ncclComm_t cp, int pos, int cp_size, const void* x, const void* w_qkv, const void* w_o,
          void* out, cudaStream_t st) {
    const auto* w = static_cast<const __nv_bfloat16*>(w_qkv);
    MGK_CUBLAS_TRY(ctx, proj_in_.run(x, w, q_, st));
    MGK_CUBLAS_TRY(ctx, proj_in_.run(x, w + E_ * DM_, k_, st));
    MGK_CUBLAS_TRY(ctx, proj_in_.run(x, w + 2 * E_ * DM_, v_, st));
    if (ring_.run(ctx, cp, pos, cp_size, q_, k_, v_, ctx_, st)) return 1;
    MGK_CUBLAS_TRY(ctx, proj_out_.run(ctx_, w_o, out, st));
    return 0;
  }

 private:
  int64_t E_ = 0, DM_ = 0;
  mgk::DeviceBuffer<__nv_bfloat16> q_, k_, v_, ctx_;  // [B, S, H, D]
  mgk::lt::Handle lt_;
  mgk::lt::Gemm proj_in_, proj_out_;
  Ring ring_;
};

}  // namespace ring
