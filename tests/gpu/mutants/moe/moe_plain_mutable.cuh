// tests/gpu/candidates/moe_plain.cuh with five bugs (each one line, in the LoRA path too) behind MOE_MUTANT (1: the top-K
// probabilities renormalised, 2: GELU for SiLU, 3: the down projection's bias missing, 4: experts
// placed round-robin over the EP group instead of in contiguous blocks, 5: the softmax's sum
// over experts starting at expert 1), for the mutants of the
// MoE forwards beside it. Everything else is the plain candidate's code, unchanged.
//
// Shared by the plain candidates of the MoE forwards (tests/gpu/candidates/moe/): no
// dispatch at all. Each rank routes its own tokens, then for every member q of its EP group
// copies q's MLP weights from q's memory (peer pointers), applies that MLP to all its
// tokens on cuBLAS (fp32 out, rounded where the reference rounds) and keeps, for the
// token slots whose expert q owns, bf16(p * y). The output is the slots' bf16 sum.
// W times the reference's MLP work, obviously correct.
//
// -D MGK_LOCAL_ONLY=1: only the rank's own MLP (the other owners' slots stay zero).
//
// setup<true>/run<true> (moe/fused_moe_fwd_lora): the owner's LoRA adapters (inputs 9..14)
// too, every linear its own GEMM rounded to bf16 and every add rounded, as PKB does.
#pragma once
#include "../../candidates/plain_compute.cuh"

namespace moe_plain {

#ifndef MOE_MUTANT
#error "define MOE_MUTANT (1-5) before including moe_plain_mutable.cuh"
#endif

using bf16 = __nv_bfloat16;

struct Dims {
  int64_t M, N, I, E, G, EL, K;
  int base;
};
inline Dims dims(mgk_ctx* ctx) {
  Dims d{mgk::dim(ctx, "M"), mgk::dim(ctx, "N"), mgk::dim(ctx, "I"), mgk::dim(ctx, "E"),
         mgk::dim(ctx, "G"), mgk::dim(ctx, "EL"), mgk::dim(ctx, "K"), 0};
  d.base = int(ctx->rank / d.G * d.G);
  return d;
}

__device__ inline float rb(float v) { return __bfloat162float(__float2bfloat16_rn(v)); }

// One thread a token: bf16 logits, fp32 softmax rounded to bf16, top-K, ties to the lower index.
__global__ void route(const float* acc, const bf16* bias, int64_t M, int E, int K, int* sel, float* prob) {
  const int64_t t = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (t >= M) return;
  float mx = -INFINITY, sum = 0;
  for (int e = 0; e < E; ++e) mx = fmaxf(mx, rb(acc[t * E + e] + __bfloat162float(bias[e])));
#if MOE_MUTANT == 5  // the softmax's sum starts at expert 1: expert 0's mass left out of the denominator
  for (int e = 1; e < E; ++e) sum += expf(rb(acc[t * E + e] + __bfloat162float(bias[e])) - mx);
#else
  for (int e = 0; e < E; ++e) sum += expf(rb(acc[t * E + e] + __bfloat162float(bias[e])) - mx);
#endif
  int taken = -1;
  for (int j = 0; j < K; ++j) {
    int best = -1;
    float bp = -1;
    for (int e = 0; e < E; ++e) {
      const float p = rb(expf(rb(acc[t * E + e] + __bfloat162float(bias[e])) - mx) / sum);
      if (e != taken && p > bp) bp = p, best = e;
    }
    taken = best;
    sel[t * K + j] = best;
    prob[t * K + j] = bp;
  }
#if MOE_MUTANT == 1  // the top-K probabilities renormalised to sum to 1
  float kept = 0;
  for (int j = 0; j < K; ++j) kept += prob[t * K + j];
  for (int j = 0; j < K; ++j) prob[t * K + j] = rb(prob[t * K + j] / kept);
#endif
}

// a = bf16(bf16(silu(bf16(G + bg))) * bf16(U + bu)).
__global__ void activation(const float* G, const float* U, const bf16* bg, const bf16* bu, int64_t M, int64_t I,
                           bf16* a) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < M * I; i += int64_t(gridDim.x) * blockDim.x) {
    const float g = rb(G[i] + __bfloat162float(bg[i % I])), u = rb(U[i] + __bfloat162float(bu[i % I]));
#if MOE_MUTANT == 2  // GELU (tanh form) for SiLU
    const float act = 0.5f * g * (1.0f + tanhf(0.7978845608f * (g + 0.044715f * g * g * g)));
#else
    const float act = g / (1.0f + expf(-g));
#endif
    a[i] = __float2bfloat16_rn(rb(act) * u);
  }
}

// slot (t, j) whose expert lives on `owner`: contrib = bf16(p * bf16(Y + bd)).
__global__ void keep(const float* Y, const bf16* bd, const int* sel, const float* prob, int64_t M, int64_t N, int K,
                     int64_t EL, int base, int owner, bf16* contrib, int group) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < M * N; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t t = i / N, n = i % N;
#if MOE_MUTANT == 3  // the down projection's bias left out
    const float y = rb(Y[i]);
#else
    const float y = rb(Y[i] + __bfloat162float(bd[n]));
#endif
    // MOE_MUTANT 4: experts dealt round-robin over the EP group (expert e on member e % G),
    // not in contiguous blocks of EL.
    for (int j = 0; j < K; ++j)
#if MOE_MUTANT == 4
      if (base + sel[t * K + j] % group == owner)
#else
      if (base + sel[t * K + j] / EL == owner)
#endif
        contrib[(t * K + j) * N + n] = __float2bfloat16_rn(prob[t * K + j] * y);
  }
}

// g = bf16(bf16(G + bg) + bf16(GL)), u alike, a = bf16(bf16(silu(g)) * u).
__global__ void activation_lora(const float* G, const float* U, const float* GL, const float* UL, const bf16* bg,
                                const bf16* bu, int64_t M, int64_t I, bf16* a) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < M * I; i += int64_t(gridDim.x) * blockDim.x) {
    const float g = rb(rb(G[i] + __bfloat162float(bg[i % I])) + rb(GL[i]));
    const float u = rb(rb(U[i] + __bfloat162float(bu[i % I])) + rb(UL[i]));
#if MOE_MUTANT == 2
    const float act = 0.5f * g * (1.0f + tanhf(0.7978845608f * (g + 0.044715f * g * g * g)));
#else
    const float act = g / (1.0f + expf(-g));
#endif
    a[i] = __float2bfloat16_rn(rb(act) * u);
  }
}

// Y becomes bf16(bf16(Y + bd) + bf16(DL)) (kept in fp32, exactly a bf16 value), so that
// keep() with a zero bias applies the probabilities.
__global__ void lora_output(float* Y, const bf16* bd, const float* DL, int64_t M, int64_t N) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < M * N; i += int64_t(gridDim.x) * blockDim.x)
#if MOE_MUTANT == 3
    Y[i] = rb(rb(Y[i]) + rb(DL[i]));
#else
    Y[i] = rb(rb(Y[i] + __bfloat162float(bd[i % N])) + rb(DL[i]));
#endif
}

__global__ void to_bf16(const float* v, int64_t n, bf16* out) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    out[i] = __float2bfloat16_rn(v[i]);
}

__global__ void sum_slots(const bf16* contrib, int64_t M, int64_t N, int K, bf16* out) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < M * N; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t t = i / N, n = i % N;
    float acc = 0;
    for (int j = 0; j < K; ++j) acc = rb(acc + __bfloat162float(contrib[(t * K + j) * N + n]));
    out[i] = __float2bfloat16_rn(acc);
  }
}

enum Buf {
  kLogits, kSel, kProb, kWg, kBg, kWu, kBu, kWd, kBd, kG, kU, kA, kY, kContrib,
  // LoRA only: the six adapters, x A^T (fp32, then bf16), GL, UL, DL (fp32), a zero bias.
  kLAg, kLBg, kLAu, kLBu, kLAd, kLBd, kXA, kXAb, kGL, kUL, kDL, kZero
};

template <bool Lora = false>
int setup(mgk_ctx* ctx) {
  const Dims d = dims(ctx);
  const size_t M = d.M, N = d.N, I = d.I, E = d.E, K = d.K;
  std::vector<size_t> sizes = {M * E * 4, M * K * 4, M * K * 4, I * N * 2, I * 2, I * N * 2, I * 2, N * I * 2, N * 2,
                               M * I * 4, M * I * 4, M * I * 2, M * N * 4, M * K * N * 2};
  if constexpr (Lora) {
    const size_t R = mgk::dim(ctx, "RK");
    for (size_t b : {R * N * 2, I * R * 2, R * N * 2, I * R * 2, R * I * 2, N * R * 2, M * R * 4, M * R * 2, M * I * 4,
                     M * I * 4, M * N * 4, N * 2})
      sizes.push_back(b);
  }
  if (int e = plain::setup(ctx, {}, sizes)) return e;
  if constexpr (Lora) MGK_CUDA_TRY(ctx, cudaMemset(plain::state(ctx).local[kZero], 0, N * 2));
  return 0;
}

// Inputs: hidden_states, gate_weight, gate_bias, then the MLP's gate, up and down
// projections (weight, bias each; symmetric); with Lora the six adapters (symmetric).
template <bool Lora = false>
int run(mgk_ctx* ctx, const mgk_tensor* in, const mgk_tensor* out, cudaStream_t s) {
  const Dims d = dims(ctx);
  auto& b = plain::state(ctx).local;
  auto f32 = [&](Buf i) { return static_cast<float*>(b[i]); };
  auto h16 = [&](Buf i) { return static_cast<bf16*>(b[i]); };
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every rank's weights of this call are in place
  MGK_CUBLAS_TRY(ctx, plain::gemm(ctx, s, false, true, d.M, d.E, d.N, in[0].data, d.N, in[1].data, d.N, b[kLogits],
                                  d.E, CUDA_R_32F));
  route<<<int((d.M + 127) / 128), 128, 0, s>>>(f32(kLogits), static_cast<const bf16*>(in[2].data), d.M, int(d.E),
                                               int(d.K), static_cast<int*>(b[kSel]), f32(kProb));
  MGK_LAUNCH_CHECK(ctx);
  MGK_CUDA_TRY(ctx, cudaMemsetAsync(b[kContrib], 0, size_t(d.M * d.K * d.N) * 2, s));
  for (int q = 0; q < d.G; ++q) {
    const int owner = d.base + q;
    if (!plain::uses(ctx, owner)) continue;
    const int64_t shapes[6][2] = {{d.I, d.N}, {1, d.I}, {d.I, d.N}, {1, d.I}, {d.N, d.I}, {1, d.N}};
    for (int w = 0; w < 6; ++w)
      MGK_CUDA_TRY(ctx, plain::copy_matrix(in[3 + w].host_peers[owner], shapes[w][1], b[kWg + w], shapes[w][1],
                                           shapes[w][0], shapes[w][1], s));
    MGK_CUBLAS_TRY(ctx, plain::gemm(ctx, s, false, true, d.M, d.I, d.N, in[0].data, d.N, b[kWg], d.N, b[kG], d.I,
                                    CUDA_R_32F));
    MGK_CUBLAS_TRY(ctx, plain::gemm(ctx, s, false, true, d.M, d.I, d.N, in[0].data, d.N, b[kWu], d.N, b[kU], d.I,
                                    CUDA_R_32F));
    if constexpr (Lora) {
      const int64_t R = mgk::dim(ctx, "RK");
      const int64_t lshapes[6][2] = {{R, d.N}, {d.I, R}, {R, d.N}, {d.I, R}, {R, d.I}, {d.N, R}};
      for (int w = 0; w < 6; ++w)
        MGK_CUDA_TRY(ctx, plain::copy_matrix(in[9 + w].host_peers[owner], lshapes[w][1], b[kLAg + w], lshapes[w][1],
                                             lshapes[w][0], lshapes[w][1], s));
      // GL = bf16(x Ag^T) Bg^T, UL = bf16(x Au^T) Bu^T (fp32; rounded in activation_lora).
      const Buf as[2] = {kLAg, kLAu}, bs[2] = {kLBg, kLBu}, outs[2] = {kGL, kUL};
      for (int k = 0; k < 2; ++k) {
        MGK_CUBLAS_TRY(ctx, plain::gemm(ctx, s, false, true, d.M, R, d.N, in[0].data, d.N, b[as[k]], d.N, b[kXA], R,
                                        CUDA_R_32F));
        to_bf16<<<plain::blocks_for(d.M * R), 256, 0, s>>>(f32(kXA), d.M * R, h16(kXAb));
        MGK_LAUNCH_CHECK(ctx);
        MGK_CUBLAS_TRY(ctx, plain::gemm(ctx, s, false, true, d.M, d.I, R, b[kXAb], R, b[bs[k]], R, b[outs[k]], d.I,
                                        CUDA_R_32F));
      }
      activation_lora<<<plain::blocks_for(d.M * d.I), 256, 0, s>>>(f32(kG), f32(kU), f32(kGL), f32(kUL), h16(kBg),
                                                                   h16(kBu), d.M, d.I, h16(kA));
    } else {
      activation<<<plain::blocks_for(d.M * d.I), 256, 0, s>>>(f32(kG), f32(kU), h16(kBg), h16(kBu), d.M, d.I,
                                                              h16(kA));
    }
    MGK_LAUNCH_CHECK(ctx);
    MGK_CUBLAS_TRY(ctx, plain::gemm(ctx, s, false, true, d.M, d.N, d.I, b[kA], d.I, b[kWd], d.I, b[kY], d.N,
                                    CUDA_R_32F));
    const bf16* bias = h16(kBd);
    if constexpr (Lora) {
      // DL = bf16(a Ad^T) Bd^T; Y becomes the rounded y, keep() then adds a zero bias.
      const int64_t R = mgk::dim(ctx, "RK");
      MGK_CUBLAS_TRY(ctx, plain::gemm(ctx, s, false, true, d.M, R, d.I, b[kA], d.I, b[kLAd], d.I, b[kXA], R,
                                      CUDA_R_32F));
      to_bf16<<<plain::blocks_for(d.M * R), 256, 0, s>>>(f32(kXA), d.M * R, h16(kXAb));
      MGK_LAUNCH_CHECK(ctx);
      MGK_CUBLAS_TRY(ctx, plain::gemm(ctx, s, false, true, d.M, d.N, R, b[kXAb], R, b[kLBd], R, b[kDL], d.N,
                                      CUDA_R_32F));
      lora_output<<<plain::blocks_for(d.M * d.N), 256, 0, s>>>(f32(kY), h16(kBd), f32(kDL), d.M, d.N);
      MGK_LAUNCH_CHECK(ctx);
      bias = h16(kZero);
    }
    keep<<<plain::blocks_for(d.M * d.N), 256, 0, s>>>(f32(kY), bias, static_cast<int*>(b[kSel]), f32(kProb), d.M,
                                                      d.N, int(d.K), d.EL, d.base, owner, h16(kContrib), int(d.G));
    MGK_LAUNCH_CHECK(ctx);
  }
  sum_slots<<<plain::blocks_for(d.M * d.N), 256, 0, s>>>(h16(kContrib), d.M, d.N, int(d.K),
                                                         static_cast<bf16*>(out[0].data));
  MGK_LAUNCH_CHECK(ctx);
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // no rank's weights are replaced while a peer still reads them
  return 0;
}

}  // namespace moe_plain
