// The fp64 oracle of the expert-parallel MoE forwards, from the definition:
//   out[t] = sum over the token's top-K experts e of p_te * MLP_owner(e)(x_t)
// with every input regenerated (gen.cuh), every owner's MLP applied to all of this rank's
// tokens in fp64 (cuBLAS), and no dispatch.
//
// Routing. hidden_states and gate_weight hold integers in {-1, 0, 1} and gate_bias integers,
// so every router logit x_t . w_e + b_e is an integer that fp32 accumulation gives exactly in
// any order (|partial sums| <= N < 2^24): the bf16 logits bf16(exact) are the very values
// the reference and every candidate round, and routing is decided on them, with no
// near-tie that a different summation order could flip. Distinct integer logits differ by
// at least 1, so their probabilities differ by a factor e or more, far beyond bf16's
// resolution: top-K of the bf16 probabilities is top-K of the logits, ties (equal logits,
// hence equal probabilities) to the lower index, except among probabilities that underflow
// to zero, whose choice weighs nothing.
//
// Scale (first order, in units of u = 2^-8, A_n = fp32_accumulation(n) the allowance for an
// n-term fp32 sum per unit of sum |terms|): the reference rounds g = x Wg^T + bg and
// u = x Wu^T + bu (error e_g = |g| + A_N (|x||Wg|^T + |bg|), e_u alike), s = silu(g)
// (e_s = |s| + 1.1 e_g, |silu'| <= 1.1), a = s u (e_a = |a| + |u| e_s + |s| e_u), y = a Wd^T + bd
// (e_y = |y| + (A_I |a| + e_a) |Wd|^T + A_I |bd|), p (|p|), p y (|p y|) and the final sum
// (|p y| per term): scale = sum_k p_k (e_y,k + 3 |y_k|). The spec's factor 2 is margin
// for the second-order terms.
#pragma once
#include "mgk/oracle_gemm.cuh"

namespace moe {

// In: hidden_states, gate_weight, gate_bias, gate_proj_{weight,bias}, up_proj_{weight,bias},
// down_proj_{weight,bias} (indices 0..8), as moe/fused_moe_fwd's spec lists them.
inline int oracle(mgk_ctx* ctx, const mgk_oracle_args* a, mgk::oracle::Blas& blas_state, cudaStream_t st) {
  namespace o = mgk::oracle;
  const Dims d = dims(ctx);
  const int64_t M = d.M, N = d.N, I = d.I, E = d.E, K = d.K;
  o::Scratch scratch(st);
  double *X = scratch.get<double>(M * N), *Xabs = scratch.get<double>(M * N), *L = scratch.get<double>(M * E),
         *Wr = scratch.get<double>(std::max(E, I) * N), *br = scratch.get<double>(std::max(E, I)),
         *Wu = scratch.get<double>(I * N), *bu = scratch.get<double>(I), *Wd = scratch.get<double>(N * I),
         *bd = scratch.get<double>(N), *Gm = scratch.get<double>(M * I), *Gmag = scratch.get<double>(M * I),
         *Um = scratch.get<double>(M * I), *Umag = scratch.get<double>(M * I), *Y = scratch.get<double>(M * N),
         *Ey = scratch.get<double>(M * N), *p = scratch.get<double>(M * K);
  int* sel = scratch.get<int>(M * K);
  if (!scratch.ok()) return mgk::set_error(ctx, "oracle: out of device memory");
  cublasHandle_t h = o::blas_on(ctx, blas_state, st);
  if (!h) return 1;
  const mgk_input_gen* g = a->gens;
  const int r = ctx->rank;
  auto* expected = static_cast<double*>(a->expected[0]);
  float* scale = a->scale[0];

  // Router of this rank.
  MGK_CUDA_TRY(ctx, o::regen(g[0], r, N, 0, 0, M, N, X, N, st));
  MGK_CUDA_TRY(ctx, o::regen(g[1], r, N, 0, 0, E, N, Wr, N, st));
  MGK_CUDA_TRY(ctx, o::regen(g[2], r, E, 0, 0, 1, E, br, E, st));
  MGK_CUBLAS_TRY(ctx, o::dgemm(h, false, true, M, E, N, X, N, Wr, N, 0, L, E));
  MGK_CUDA_TRY(ctx, o::for_each(
                        M,
                        [=] __device__(int64_t t) {
                          double* l = L + t * E;
                          double mx = -INFINITY, sum = 0;
                          for (int64_t e = 0; e < E; ++e) {
                            l[e] = mgk::round_to(MGK_BF16, l[e] + br[e]);
                            mx = fmax(mx, l[e]);
                          }
                          for (int64_t e = 0; e < E; ++e) sum += exp(l[e] - mx);
                          int first = -1;
                          for (int64_t j = 0; j < K; ++j) {
                            int best = -1;
                            for (int e = 0; e < int(E); ++e)
                              if (e != first && (best < 0 || l[e] > l[best])) best = e;
                            first = best;
                            sel[t * K + j] = best;
                            p[t * K + j] = exp(l[best] - mx) / sum;
                          }
                        },
                        st));
  MGK_CUDA_TRY(ctx, o::for_each(
                        M * N,
                        [=] __device__(int64_t i) {
                          expected[i] = 0;
                          scale[i] = 0;
                          Xabs[i] = fabs(X[i]);
                        },
                        st));

  const double accN = o::fp32_accumulation(N), accI = o::fp32_accumulation(I);
  for (int64_t q = 0; q < d.G; ++q) {
    const int owner = d.base + int(q);
    MGK_CUDA_TRY(ctx, o::regen(g[3], owner, N, 0, 0, I, N, Wr, N, st));
    MGK_CUDA_TRY(ctx, o::regen(g[4], owner, I, 0, 0, 1, I, br, I, st));
    MGK_CUDA_TRY(ctx, o::regen(g[5], owner, N, 0, 0, I, N, Wu, N, st));
    MGK_CUDA_TRY(ctx, o::regen(g[6], owner, I, 0, 0, 1, I, bu, I, st));
    MGK_CUDA_TRY(ctx, o::regen(g[7], owner, I, 0, 0, N, I, Wd, I, st));
    MGK_CUDA_TRY(ctx, o::regen(g[8], owner, N, 0, 0, 1, N, bd, N, st));
    MGK_CUBLAS_TRY(ctx, o::dgemm(h, false, true, M, I, N, X, N, Wr, N, 0, Gm, I));
    MGK_CUBLAS_TRY(ctx, o::dgemm(h, false, true, M, I, N, X, N, Wu, N, 0, Um, I));
    MGK_CUDA_TRY(ctx, o::absolute(Wr, I * N, st));
    MGK_CUDA_TRY(ctx, o::absolute(Wu, I * N, st));
    MGK_CUBLAS_TRY(ctx, o::dgemm(h, false, true, M, I, N, Xabs, N, Wr, N, 0, Gmag, I));
    MGK_CUBLAS_TRY(ctx, o::dgemm(h, false, true, M, I, N, Xabs, N, Wu, N, 0, Umag, I));
    // Gm becomes a, Gmag becomes A_I |a| + e_a: what |Wd|^T carries into e_y.
    MGK_CUDA_TRY(ctx, o::for_each(
                          M * I,
                          [=] __device__(int64_t i) {
                            const int64_t c = i % I;
                            const double gv = Gm[i] + br[c], uv = Um[i] + bu[c];
                            const double s = gv / (1.0 + exp(-gv)), av = s * uv;
                            const double eg = fabs(gv) + accN * (Gmag[i] + fabs(br[c]));
                            const double eu = fabs(uv) + accN * (Umag[i] + fabs(bu[c]));
                            const double es = fabs(s) + 1.1 * eg;
                            Gm[i] = av;
                            Gmag[i] = accI * fabs(av) + fabs(av) + fabs(uv) * es + fabs(s) * eu;
                          },
                          st));
    MGK_CUBLAS_TRY(ctx, o::dgemm(h, false, true, M, N, I, Gm, I, Wd, I, 0, Y, N));
    MGK_CUDA_TRY(ctx, o::absolute(Wd, N * I, st));
    MGK_CUBLAS_TRY(ctx, o::dgemm(h, false, true, M, N, I, Gmag, I, Wd, I, 0, Ey, N));
    const int64_t EL = d.EL;
    const int base = d.base;
    MGK_CUDA_TRY(ctx, o::for_each(
                          M * N,
                          [=] __device__(int64_t i) {
                            const int64_t t = i / N, n = i % N;
                            const double y = Y[i] + bd[n], ey = Ey[i] + accI * fabs(bd[n]) + fabs(y);
                            for (int64_t j = 0; j < K; ++j) {
                              if (base + sel[t * K + j] / EL != owner) continue;
                              expected[i] += p[t * K + j] * y;
                              scale[i] += float(p[t * K + j] * (ey + 3 * fabs(y)));
                            }
                          },
                          st));
  }
  return 0;
}

}  // namespace moe
