// Reference: a Ulysses attention layer. Rank r owns positions [r S, (r+1) S) of each of the B
// sequences and heads [r HL, (r+1) HL) during attention:
//   qkv = bf16(x w_qkv^T)                      cuBLASLt, [B S, 3E], the rank's own weights
//   all-to-all 1: heads out, sequence in       pack (one strided copy), NCCL send/recv group,
//                                              unpack into [B, T, 3 HL D] (one strided copy)
//   o = bf16(softmax(q k^T / sqrt D) v)        cuDNN fused attention, non-causal, all T keys
//   all-to-all 2: sequence out, heads in       pack, NCCL, unpack into [B S, E]
//   out = bf16(attn w_o^T)                     cuBLASLt, the rank's own w_o
// The bf16 roundings are ParallelKernelBench's (qkv, the attention output, out). PKB itself
// skips the transpose before attention (its softmax runs over heads); this is the layer it
// names, so the output depends on every rank's tokens (see the statement).
#include <cmath>

#include "../../sp/ulysses_exchange.cuh"
#include "mgk/cudnn_attention.h"
#include "mgk/lt_gemm.h"
#include "mgk/reference_kit.h"

namespace {

using bf16 = __nv_bfloat16;

struct UlyssesAttention : mgk::Reference {
  using Reference::Reference;
  const int64_t B = dim("B"), S = dim("S"), T = dim("T"), H = dim("H"), HL = dim("HL"), D = dim("D"), E = dim("E");
  mgk::lt::Handle lt;
  mgk::lt::Gemm project_qkv, project_out;
  mgk::dnn::Handle dnn;
  mgk::dnn::Attention attention;
  mgk::DeviceBuffer<bf16> qkv;     // [B S, 3E]: this rank's positions, every head
  mgk::DeviceBuffer<bf16> send;    // [W][3 B S][HL D]: chunk p = heads of rank p, for every (token, q|k|v)
  mgk::DeviceBuffer<bf16> recv;    // [W][B][S][3 HL D]: chunk s = rank s's positions of this rank's heads
  mgk::DeviceBuffer<bf16> heads;   // [B][T][3 HL D]: the whole sequence of this rank's heads
  mgk::DeviceBuffer<bf16> o;       // [B][T][HL D]: attention output of this rank's heads
  mgk::DeviceBuffer<bf16> o_send;  // [W][B][S HL D]: chunk p = rank p's positions
  mgk::DeviceBuffer<bf16> o_recv;  // [W][B S][HL D]: chunk s = rank s's heads of this rank's positions
  mgk::DeviceBuffer<bf16> attn;    // [B S, E]
  mgk::DeviceBuffer<float> stats;  // [B, HL, T], cuDNN's log-sum-exp (unused here)

  int setup() {
    const int64_t tokens = B * S;
    for (auto* p : {&qkv, &send, &recv, &heads}) MGK_CUDA_TRY(ctx, p->allocate(tokens * 3 * E));
    for (auto* p : {&o, &o_send, &o_recv, &attn}) MGK_CUDA_TRY(ctx, p->allocate(tokens * E));
    MGK_CUDA_TRY(ctx, stats.allocate(B * HL * T));
    MGK_CUBLAS_TRY(ctx, lt.create());
    mgk::lt::GemmShape g;
    g.m = B * S, g.n = 3 * E, g.k = E, g.trans_b = true;  // w_qkv is [3E, E]: x w_qkv^T
    MGK_CUBLAS_TRY(ctx, project_qkv.plan(lt, g));
    g.n = E;  // w_o is [E, E]: attn w_o^T
    MGK_CUBLAS_TRY(ctx, project_out.plan(lt, g));
    MGK_CUDNN_TRY(ctx, dnn.create());
    mgk::dnn::AttentionShape a;
    a.b = B, a.h = HL, a.s_q = a.s_kv = T, a.d = D;
    // q, k, v interleaved per position in `heads`: (b, h, t, d) at b T 3HLD + t 3HLD + h D + d.
    a.q = a.k = a.v = {T * 3 * HL * D, D, 3 * HL * D, 1};
    a.o = mgk::dnn::bshd(HL, T, D);
    a.scale = float(1.0 / std::sqrt(double(D)));
    a.causal = false;
    MGK_CUDNN_TRY(ctx, attention.plan(dnn, a));
    return 0;
  }

  int run(const mgk_tensor* in, const mgk_tensor* out, cudaStream_t st) {
    const int W = world();
    const int64_t BS = B * S, C = HL * D, e2 = 2;  // C: one rank's share of a position's heads
    MGK_CUBLAS_TRY(ctx, project_qkv.run(in[0].data, in[1].data, qkv, st));
    // Row m = 3 token + j of qkv (E wide) holds q|k|v of one token; rank p gets columns [p C, (p+1) C).
    MGK_CUDA_TRY(ctx, sp::copy3d(qkv, C * e2, E * e2, send, 3 * BS * C * e2, C * e2, W, 3 * BS, C * e2, st));
    if (sp::exchange(ctx, send, size_t(3 * BS * C * e2), recv, size_t(3 * BS * C * e2), size_t(3 * BS * C),
                     MGK_BF16, st))
      return 1;
    // Rank s's chunk is [B][S][3C]; its positions are [s S, (s+1) S) of each sequence.
    MGK_CUDA_TRY(ctx, sp::copy3d(recv, 3 * BS * C * e2, S * 3 * C * e2, heads, S * 3 * C * e2,
                                 T * 3 * C * e2, W, B, S * 3 * C * e2, st));
    MGK_CUDNN_TRY(ctx, attention.run(dnn, heads, heads + C, heads + 2 * C, o, stats, st));
    // Rank p gets positions [p S, (p+1) S) of each sequence: one contiguous S C run per (p, b).
    MGK_CUDA_TRY(ctx, sp::copy3d(o, S * C * e2, T * C * e2, o_send, BS * C * e2, S * C * e2, W, B,
                                 S * C * e2, st));
    if (sp::exchange(ctx, o_send, size_t(BS * C * e2), o_recv, size_t(BS * C * e2), size_t(BS * C), MGK_BF16, st))
      return 1;
    // Rank s's chunk holds heads [s HL, (s+1) HL): columns [s C, (s+1) C) of each token's row.
    MGK_CUDA_TRY(ctx, sp::copy3d(o_recv, BS * C * e2, C * e2, attn, C * e2, E * e2, W, BS, C * e2, st));
    MGK_CUBLAS_TRY(ctx, project_out.run(attn, in[2].data, out[0].data, st));
    return 0;
  }

  int oracle(const mgk_oracle_args* a, cudaStream_t st);  // below, after its kernel
};

constexpr int kCols = 4;   // D <= 128 = 4 x 32 lanes
constexpr int kFlags = 4;  // a query's ambiguous elements followed exactly; more go to a worst-case term

__device__ double warp_sum(double x) {
  for (int off = 16; off; off /= 2) x += __shfl_xor_sync(0xffffffffu, x, off);
  return x;
}

// One warp per row (b, i, h) of this rank's positions, every head, lanes over D: exact
// softmax attention over all T positions, in fp64, of the bf16 q, k, v the projection gives
// (qkv: [W][B][S][3E], rank s's positions in block s), and the row's scale (statement):
//   |o| + min(sum p|v|, 4 sqrt(sum p^2 v^2)) + (A_T + 2 A_D max_j sm |q|.|k_j|) sum p|v|
//   + (q flips + k flips + v flips) / u,
// where eta (same layout as qkv) is the gap by which another fp32 accumulation order can
// move an element's bf16 value (0 for almost all elements), carried to o to first order by
// d o_c / d x_j = p_j (v_jc - o_c) (x_j the scaled score): a q element d moves every score,
// by sm eta_d k_jd, so o_c by sm eta_d |M_dc - o_c Kbar_d| (M = sum p k_d v_c, Kbar = sum p k_d);
// a key's elements move its own score only, independent over keys and of v: the worst case
// or 4 sqrt of the sum of squares; a value moves o by p eta.
__global__ void attention_oracle(const double* qkv, const double* eta, double* o_out, double* s_out, int rank,
                                 int W, int64_t B, int64_t S, int64_t H, int64_t D) {
  const int64_t E = H * D, T = W * S, rows = B * S * H;
  const int lane = threadIdx.x % 32;
  const double sm = 1.0 / sqrt(double(D)), u = mgk::oracle::kBf16U;
  const double acc_t = mgk::oracle::fp32_accumulation(T), acc_d = mgk::oracle::fp32_accumulation(D);
  for (int64_t row = (blockIdx.x * int64_t(blockDim.x) + threadIdx.x) / 32; row < rows;
       row += int64_t(gridDim.x) * blockDim.x / 32) {
    const int64_t h = row % H, i = (row / H) % S, b = row / (H * S);
    auto at = [&](int64_t j) { return (((j / S) * B + b) * S + j % S) * 3 * E + h * D; };  // position j's q
    const int64_t qb = (((int64_t(rank) * B + b) * S + i) * 3 * E) + h * D;
    double q[kCols], eq_extra[kCols];
    int nflag = 0, flag_d[kFlags] = {};
    double flag_eta[kFlags] = {};
    for (int t = 0; t < kCols; ++t) {
      const int64_t c = lane + 32 * t;
      q[t] = c < D ? qkv[qb + c] : 0.0;
      const double e = c < D ? eta[qb + c] : 0.0;
      unsigned mask = __ballot_sync(0xffffffffu, e != 0);
      const int order = nflag + __popc(mask & ((1u << lane) - 1u));
      eq_extra[t] = e != 0 && order >= kFlags ? e : 0.0;
      while (mask && nflag < kFlags) {  // warp-uniform: mask and nflag are the same on every lane
        const int l = __ffs(mask) - 1;
        flag_d[nflag] = l + 32 * t;
        flag_eta[nflag] = __shfl_sync(0xffffffffu, e, l);
        ++nflag;
        mask &= mask - 1;
      }
    }
    auto score = [&](int64_t kb) {
      double dot = 0;
      for (int t = 0; t < kCols; ++t)
        if (lane + 32 * t < D) dot += q[t] * qkv[kb + lane + 32 * t];
      return warp_sum(dot) * sm;
    };
    // Pass 1: max score, normaliser, largest sm |q|.|k_j|.
    double m = -INFINITY, z = 0, mag_max = 0;
    for (int64_t j = 0; j < T; ++j) {
      const int64_t kb = at(j) + E;
      double mag = 0;
      for (int t = 0; t < kCols; ++t)
        if (lane + 32 * t < D) mag += fabs(q[t] * qkv[kb + lane + 32 * t]);
      const double x = score(kb), m2 = fmax(m, x);
      z = z * exp(m - m2) + exp(x - m2);
      m = m2;
      mag_max = fmax(mag_max, warp_sum(mag) * sm);
    }
    // Pass 2: o and the sums the scale needs.
    double o[kCols] = {}, pv[kCols] = {}, pv2[kCols] = {}, ev[kCols] = {}, ev2[kCols] = {}, kf1[kCols] = {},
           kf2[kCols] = {}, qx1[kCols] = {}, M[kFlags][kCols] = {}, kbar[kFlags] = {};
    double kf0 = 0, kf20 = 0, qx0 = 0;
    for (int64_t j = 0; j < T; ++j) {
      const int64_t kb = at(j) + E, vb = kb + E;
      const double p = exp(score(kb) - m) / z;
      double dk = 0, wq = 0;
      for (int t = 0; t < kCols; ++t)
        if (lane + 32 * t < D) {
          dk += fabs(q[t]) * eta[kb + lane + 32 * t];
          wq += eq_extra[t] * fabs(qkv[kb + lane + 32 * t]);
        }
      dk = warp_sum(dk) * sm;
      wq = warp_sum(wq) * sm;
      double kf[kFlags];
#pragma unroll
      for (int f = 0; f < kFlags; ++f) {
        kf[f] = f < nflag ? qkv[kb + flag_d[f]] : 0.0;
        kbar[f] += p * kf[f];
      }
      for (int t = 0; t < kCols; ++t) {
        const bool in = lane + 32 * t < D;
        const double vj = in ? qkv[vb + lane + 32 * t] : 0.0, evj = in ? eta[vb + lane + 32 * t] : 0.0;
        o[t] += p * vj;
        pv[t] += p * fabs(vj);
        pv2[t] += p * p * vj * vj;
        ev[t] += p * evj;
        ev2[t] += p * p * evj * evj;
        kf1[t] += p * dk * fabs(vj);
        kf2[t] += p * p * dk * dk * vj * vj;
        qx1[t] += p * wq * fabs(vj);
#pragma unroll
        for (int f = 0; f < kFlags; ++f) M[f][t] += p * kf[f] * vj;
      }
      kf0 += p * dk;
      kf20 += p * p * dk * dk;
      qx0 += p * wq;
    }
    for (int t = 0; t < kCols; ++t) {
      if (lane + 32 * t >= D) continue;
      const double ao = fabs(o[t]);
      double flips_q = qx1[t] + ao * qx0;
#pragma unroll
      for (int f = 0; f < kFlags; ++f)
        if (f < nflag) flips_q += sm * flag_eta[f] * fabs(M[f][t] - o[t] * kbar[f]);
      // |v - o| <= |v| + |o| and (a + b)^2 <= 2 a^2 + 2 b^2.
      const double flips_k = fmin(kf1[t] + ao * kf0, 4.0 * sqrt(2.0 * kf2[t] + 2.0 * o[t] * o[t] * kf20));
      const double flips_v = fmin(ev[t], 4.0 * sqrt(ev2[t]));
      const int64_t e = (b * S + i) * E + h * D + lane + 32 * t;
      o_out[e] = o[t];
      s_out[e] = ao + fmin(pv[t], 4.0 * sqrt(pv2[t])) + (acc_t + 2.0 * acc_d * mag_max) * pv[t] +
                 (flips_q + flips_k + flips_v) / u;
    }
  }
}

// out = o w_o^T exactly, o the exact attention of the reference's bf16 q, k, v (their exact
// projections rounded to bf16: the rounding point every implementation shares), with
//   scale = |out| + A_E sum_e |o_e w_oe| + min(sum_e S_e |w_oe|, 4 sqrt(sum_e S_e^2 w_oe^2)):
// the output's rounding, the output GEMM's fp32 accumulation, and the attention's errors
// (bounded by u S_e, S_e the attention scale above) carried through w_o. w_o is drawn
// independently of everything those errors depend on, with mean zero, so their sum weighted
// by it has standard deviation sqrt(sum_e err_e^2 w_oe^2): 4 of those, or the worst case.
int UlyssesAttention::oracle(const mgk_oracle_args* a, cudaStream_t st) {
  namespace o = mgk::oracle;
  const int W = world();
  const int64_t BS = B * S, n = BS * E;
  if (D > 128) return mgk::set_error(ctx, "oracle: D = %lld > 128", (long long)D);
  o::Scratch scratch(st);
  double *qkv = scratch.get<double>(W * BS * 3 * E), *eta = scratch.get<double>(W * BS * 3 * E),
         *x = scratch.get<double>(n), *w = scratch.get<double>(3 * E * E), *attn = scratch.get<double>(n),
         *s_attn = scratch.get<double>(n), *mag = scratch.get<double>(n), *prop = scratch.get<double>(n),
         *prop2 = scratch.get<double>(n);
  if (!scratch.ok()) return mgk::set_error(ctx, "oracle: out of device memory");
  cublasHandle_t blas = oracle_blas(st);
  if (!blas) return 1;
  // Every position's exact q|k|v, from its owner's x and w_qkv, and sum |x w| of each.
  for (int s = 0; s < W; ++s) {
    MGK_CUDA_TRY(ctx, o::regen(a->gens[0], s, E, 0, 0, BS, E, x, E, st));
    MGK_CUDA_TRY(ctx, o::regen(a->gens[1], s, E, 0, 0, 3 * E, E, w, E, st));
    MGK_CUBLAS_TRY(ctx, o::product_and_magnitude(blas, BS, 3 * E, E, {x, E, n}, {w, E, 3 * E * E, true},
                                                 qkv + s * BS * 3 * E, 0, eta + s * BS * 3 * E, 0, 3 * E, st));
  }
  // The bf16 value, and the gap between the bf16 values of the ends of the interval an fp32
  // accumulation can land in: A_E u sum|x w| plus the accumulator's last rounding.
  const double acc_e = o::fp32_accumulation(E);
  MGK_CUDA_TRY(ctx, o::for_each(
                        W * BS * 3 * E,
                        [=] __device__(int64_t i) {
                          const double v = qkv[i], margin = o::kBf16U * acc_e * eta[i] + o::kF32U * fabs(v);
                          qkv[i] = mgk::round_to(MGK_BF16, v);
                          eta[i] = mgk::round_to(MGK_BF16, v + margin) - mgk::round_to(MGK_BF16, v - margin);
                        },
                        st));
  const int64_t warps = BS * H;
  const int grid = int(std::min<int64_t>((warps * 32 + 127) / 128, 132 * 64));
  attention_oracle<<<grid, 128, 0, st>>>(qkv, eta, attn, s_attn, rank(), W, B, S, H, D);
  MGK_LAUNCH_CHECK(ctx);
  double* wo = w;  // w_qkv's buffer is free now
  auto* expected = static_cast<double*>(a->expected[0]);
  MGK_CUDA_TRY(ctx, o::regen(a->gens[2], rank(), E, 0, 0, E, E, wo, E, st));
  MGK_CUBLAS_TRY(ctx, o::product_and_magnitude(blas, BS, E, E, {attn, E, n}, {wo, E, E * E, true}, expected, 0, mag,
                                               0, E, st));  // wo is |w_o| from here on
  MGK_CUBLAS_TRY(ctx, o::dgemm(blas, false, true, BS, E, E, s_attn, E, wo, E, 0, prop, E));
  MGK_CUDA_TRY(ctx, o::for_each(n, [=] __device__(int64_t i) { s_attn[i] *= s_attn[i]; }, st));
  MGK_CUDA_TRY(ctx, o::for_each(E * E, [=] __device__(int64_t i) { wo[i] *= wo[i]; }, st));
  MGK_CUBLAS_TRY(ctx, o::dgemm(blas, false, true, BS, E, E, s_attn, E, wo, E, 0, prop2, E));
  float* scale = a->scale[0];
  MGK_CUDA_TRY(ctx, o::for_each(
                        n,
                        [=] __device__(int64_t i) {
                          scale[i] = float(fabs(expected[i]) + acc_e * mag[i] + fmin(prop[i], 4.0 * sqrt(prop2[i])));
                        },
                        st));
  return 0;
}

}  // namespace

MGK_REFERENCE(UlyssesAttention)
