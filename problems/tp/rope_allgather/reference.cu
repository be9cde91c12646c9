// Reference: a RoPE kernel rotates this rank's q and k, with PyTorch's bf16 roundings (each
// product rounded, then the sum), straight into this rank's positions of q_out and k_out;
// then, per batch, NCCL all-gathers the W ranks' position blocks in place (one group): along
// one batch the blocks lie in rank order, which is the layout an all-gather delivers, so no
// staging buffer and no rearranging copy is needed.
#include <algorithm>

#include "mgk/reference_kit.h"

namespace {

__device__ inline __nv_bfloat16 rope(__nv_bfloat16 x, __nv_bfloat16 partner, bool lower, __nv_bfloat16 c,
                                     __nv_bfloat16 s) {
  // rotate_half: the lower half takes the negated upper half, the upper half the lower one.
  const __nv_bfloat16 rot = lower ? __hneg(partner) : partner;
  return __hadd(__hmul(x, c), __hmul(rot, s));  // bf16 ops: each rounds, as in PyTorch
}

// Where element i of this rank's x (B x SL x NH x D) goes in the output (B x S x NH x D):
// its batch's block of positions for `rank`.
struct Placement {
  int64_t block;   // SL * NH * D: one rank's positions of one batch
  int64_t stride;  // S * NH * D: one batch of the output
  int rank;
  __device__ int64_t operator()(int64_t i) const { return i / block * stride + rank * block + i % block; }
};

// Element by element (any head dim).
__global__ void rope_kernel(const __nv_bfloat16* x, const __nv_bfloat16* cos, const __nv_bfloat16* sin,
                            __nv_bfloat16* out, Placement at, int64_t n, int nh, int d_head) {
  const int half = d_head / 2;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const int d = int(i % d_head);
    const int64_t token = i / d_head / nh;  // b * SL + j
    const bool lower = d < half;
    const __nv_bfloat16 partner = x[i + (lower ? half : -half)];
    out[at(i)] = rope(x[i], partner, lower, cos[token * d_head + d], sin[token * d_head + d]);
  }
}

// Eight elements of one half of a head per thread, in 16-byte words (half a multiple of 8).
__global__ void rope_kernel_vec(const uint4* x, const uint4* cos, const uint4* sin, uint4* out, Placement at,
                                int64_t words, int nh, int d_head) {
  const int half_words = d_head / 16, head_words = d_head / 8;
  for (int64_t v = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; v < words; v += int64_t(gridDim.x) * blockDim.x) {
    const int dw = int(v % head_words);
    const int64_t token = v / head_words / nh;
    const bool lower = dw < half_words;
    const uint4 xr = x[v], pr = x[v + (lower ? half_words : -half_words)];
    const uint4 cr = cos[token * head_words + dw], sr = sin[token * head_words + dw];
    const auto *xe = reinterpret_cast<const __nv_bfloat16*>(&xr), *pe = reinterpret_cast<const __nv_bfloat16*>(&pr);
    const auto *ce = reinterpret_cast<const __nv_bfloat16*>(&cr), *se = reinterpret_cast<const __nv_bfloat16*>(&sr);
    uint4 result;
    auto* re = reinterpret_cast<__nv_bfloat16*>(&result);
    for (int k = 0; k < 8; ++k) re[k] = rope(xe[k], pe[k], lower, ce[k], se[k]);
    out[at(8 * v) / 8] = result;
  }
}

struct RopeAllGather : mgk::Reference {
  using Reference::Reference;
  const int64_t B = dim("B"), SL = dim("SL"), S = dim("S"), NH = dim("NH"), D = dim("D");

  int run(const mgk_tensor* in, const mgk_tensor* out, cudaStream_t st) {
    const int64_t n = in[0].numel, block = SL * NH * D;
    const Placement at{block, S * NH * D, rank()};
    const bool vec = D % 16 == 0;  // each half of a head is whole 16-byte words
    const int64_t items = vec ? n / 8 : n;
    const int blocks = int(std::min<int64_t>((items + 255) / 256, int64_t(ctx->num_sms) * 16));
    const auto* cos = static_cast<const __nv_bfloat16*>(in[2].data);
    const auto* sin = static_cast<const __nv_bfloat16*>(in[3].data);
    for (int t = 0; t < 2; ++t) {
      const auto* x = static_cast<const __nv_bfloat16*>(in[t].data);
      auto* y = static_cast<__nv_bfloat16*>(out[t].data);
      if (vec)
        rope_kernel_vec<<<blocks, 256, 0, st>>>(reinterpret_cast<const uint4*>(x), reinterpret_cast<const uint4*>(cos),
                                                reinterpret_cast<const uint4*>(sin), reinterpret_cast<uint4*>(y), at,
                                                items, int(NH), int(D));
      else
        rope_kernel<<<blocks, 256, 0, st>>>(x, cos, sin, y, at, n, int(NH), int(D));
      MGK_LAUNCH_CHECK(ctx);
    }
    // In place: this rank's block is already at recv + rank * block, as NCCL's in-place
    // all-gather wants it.
    MGK_NCCL_STEP(ctx, ncclGroupStart());
    for (int t = 0; t < 2; ++t)
      for (int64_t b = 0; b < B; ++b) {
        auto* recv = static_cast<__nv_bfloat16*>(out[t].data) + b * at.stride;
        MGK_NCCL_STEP(ctx, ncclAllGather(recv + rank() * block, recv, block, ncclBfloat16, comm(), st));
      }
    MGK_NCCL_STEP(ctx, ncclGroupEnd());
    return 0;
  }

  // Every output element from the owning rank's regenerated inputs, exactly:
  // x cos + rotate_half(x) sin. The reference rounds both products and their sum to bf16, so
  // S = |x cos| + |rotate_half(x) sin| + |x cos + rotate_half(x) sin|.
  int oracle(const mgk_oracle_args* a, cudaStream_t st) {
    const int64_t SL = this->SL, S = this->S, NH = this->NH, D = this->D;  // by value into the device lambda
    const mgk_input_gen gc = a->gens[2], gs = a->gens[3];
    for (int t = 0; t < 2; ++t) {
      const mgk_input_gen gx = a->gens[t];
      auto* expected = static_cast<double*>(a->expected[t]);
      float* scale = a->scale[t];
      MGK_CUDA_TRY(ctx, mgk::oracle::for_each(
                            a->outputs[t].numel,
                            [=] __device__(int64_t i) {
                              const int64_t d = i % D, h = i / D % NH, pos = i / D / NH % S, b = i / D / NH / S;
                              const int r = int(pos / SL);
                              const int64_t token = b * SL + pos % SL, at = (token * NH + h) * D + d;
                              const int64_t half = D / 2;
                              const bool lower = d < half;
                              const double x = mgk::gen_value(gx, r, at);
                              const double partner = mgk::gen_value(gx, r, at + (lower ? half : -half));
                              const double rot = lower ? -partner : partner;
                              const double p = x * mgk::gen_value(gc, r, token * D + d);
                              const double q = rot * mgk::gen_value(gs, r, token * D + d);
                              expected[i] = p + q;
                              scale[i] = float(fabs(p) + fabs(q) + fabs(p + q));
                            },
                            st));
    }
    return 0;
  }
};

}  // namespace

MGK_REFERENCE(RopeAllGather)
