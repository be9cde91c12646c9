// The fp64 oracle shared by the data-parallel problems (see dp_mlp.cuh for the model): the
// mean over ranks of every rank's exact gradient, with a bound on how far the reference's
// bf16 computation of it may land, and the expected Adam step from it.
//
// Error bounds are in units of u = 2^-8 (the tolerance is factor * u * scale, factor 2).
// Every value the reference rounds to bf16 adds its own magnitude (one rounding). A K-term
// product C = A B adds fp32_accumulation(K) |A| |B| for its fp32 accumulation, and carries
// its operands' errors E_A, E_B as lambda * sqrt(E_A^2 B^2 + A^2 E_B^2) (lambda = 4): the
// rounding errors of random data are independent and of either sign, so they add like a
// random walk (Hoeffding: beyond 4 standard deviations with probability < 1e-3, and the
// bounds E are worst cases, about sqrt(3) standard deviations each). Adding them in
// absolute value instead would grow with K at every layer and let zeros pass at `large`.
// relu: rounding to nearest keeps the sign, so only the fp32 accumulation error of h can
// flip relu's mask; where |h| is within twice that, the mask's side of dh is allowed to be
// either (the full |da|).
#pragma once
#include "dp_mlp.cuh"
#include "mgk/oracle_gemm.cuh"

namespace dp::oracle {

namespace o = mgk::oracle;
inline constexpr double kLambda = 4.0;

// The mean gradient of the model over all ranks' batches, fp64, flat in the params' layout.
struct MeanGradient {
  double* p = nullptr;  // the parameters (exact, as loaded)
  double* g = nullptr;  // sum_r g_r / W
  double* e = nullptr;  // the bound on the reference's error in g, in units of u
};

// Row-major fp64 matrix operand for gemm below.
struct Mat {
  const double* p;
  int64_t ld;
  bool t = false;
};

// The flat params (fp64) from inputs W1, b1, W2, b2 (generators g[0..3]) of rank `rank`.
inline cudaError_t load_params(const Dims& d, const mgk_input_gen* g, int rank, double* P, cudaStream_t st) {
  const int64_t rows[4] = {d.H, 1, d.DO, 1}, cols[4] = {d.DI, d.H, d.H, d.DO},
                offs[4] = {0, d.off_b1(), d.off_W2(), d.off_b2()};
  for (int k = 0; k < 4; ++k)
    if (cudaError_t e = o::regen(g[k], rank, cols[k], 0, 0, rows[k], cols[k], P + offs[k], cols[k], st)) return e;
  return cudaSuccess;
}

inline cublasStatus_t gemm(cublasHandle_t h, int64_t m, int64_t n, int64_t k, Mat a, Mat b, double* c) {
  return o::dgemm(h, a.t, b.t, m, n, k, a.p, a.ld, b.p, b.ld, 0.0, c, n);
}

// Fills out.g and out.e (device arrays of d.numel() doubles, allocated by the caller) at
// the parameters the caller put in out.p; gx, gy are X's and Y's generators. 0, or non-zero
// with ctx->error set.
inline int mean_gradient(mgk_ctx* ctx, o::Blas& blas, const Dims& d, const mgk_input_gen& gx, const mgk_input_gen& gy,
                         const MeanGradient& out, cudaStream_t st) {
  const int64_t NL = d.NL, DI = d.DI, H = d.H, DO = d.DO, N = d.numel();
  const int W = ctx->world_size;
  o::Scratch s(st);
  double *Pa = s.get<double>(N), *Pq = s.get<double>(N);                         // |p|, p^2
  double *G = s.get<double>(N), *FM = s.get<double>(N), *FV = s.get<double>(N);  // one rank's
  double *A = s.get<double>(N), *Q = s.get<double>(N);  // sum_r |g_r|, sum_r E_r^2
  double *X = s.get<double>(NL * DI), *Xa = s.get<double>(NL * DI), *Xq = s.get<double>(NL * DI);
  double *Y = s.get<double>(NL * DO), *ones = s.get<double>(NL);
  double *h = s.get<double>(NL * H), *tau = s.get<double>(NL * H), *a = s.get<double>(NL * H),
         *aq = s.get<double>(NL * H), *ea2 = s.get<double>(NL * H), *da = s.get<double>(NL * H),
         *dam = s.get<double>(NL * H), *dav = s.get<double>(NL * H);
  double *ov = s.get<double>(NL * DO), *om = s.get<double>(NL * DO), *ovar = s.get<double>(NL * DO),
         *dd = s.get<double>(NL * DO), *dda = s.get<double>(NL * DO), *ddq = s.get<double>(NL * DO),
         *ed2 = s.get<double>(NL * DO);
  if (!s.ok()) return mgk::set_error(ctx, "oracle: out of device memory");
  cublasHandle_t bh = o::blas_on(ctx, blas, st);
  if (!bh) return 1;
  const double* P = out.p;
  MGK_CUDA_TRY(ctx, o::for_each(N, [=] __device__(int64_t i) { Pa[i] = fabs(P[i]), Pq[i] = P[i] * P[i]; }, st));
  MGK_CUDA_TRY(ctx, o::for_each(NL, [=] __device__(int64_t i) { ones[i] = 1.0; }, st));
  const double* W1 = P;
  const double *b1 = P + d.off_b1(), *W2 = P + d.off_W2(), *b2 = P + d.off_b2();
  const double *W1a = Pa, *b1a = Pa + d.off_b1(), *W2a = Pa + d.off_W2(), *b2a = Pa + d.off_b2();
  const double* W2q = Pq + d.off_W2();
  const double acc_h = o::fp32_accumulation(DI + 1), acc_o = o::fp32_accumulation(H + 1),
               acc_da = o::fp32_accumulation(DO), acc_g = o::fp32_accumulation(NL), u = o::kBf16U, lam = kLambda;
  const double norm = 2.0 / double(NL * DO);
  for (int r = 0; r < W; ++r) {
    MGK_CUDA_TRY(ctx, o::regen(gx, r, DI, 0, 0, NL, DI, X, DI, st));
    MGK_CUDA_TRY(ctx, o::regen(gy, r, DO, 0, 0, NL, DO, Y, DO, st));
    MGK_CUDA_TRY(ctx, o::for_each(NL * DI, [=] __device__(int64_t i) { Xa[i] = fabs(X[i]), Xq[i] = X[i] * X[i]; }, st));
    // Forward: h = X W1^T + b1 (tau: its fp32 accumulation error, doubled), a = relu(h).
    MGK_CUBLAS_TRY(ctx, gemm(bh, NL, H, DI, {X, DI}, {W1, DI, true}, h));
    MGK_CUBLAS_TRY(ctx, gemm(bh, NL, H, DI, {Xa, DI}, {W1a, DI, true}, tau));
    MGK_CUDA_TRY(ctx, o::for_each(
                          NL * H,
                          [=] __device__(int64_t i) {
                            const double hv = h[i] + b1[i % H], m = tau[i] + b1a[i % H];
                            const double t = 2.0 * acc_h * m * u, e = fabs(hv) + acc_h * m;
                            const double ea = (hv > 0.0 || fabs(hv) <= t) ? e : 0.0;
                            h[i] = hv, tau[i] = t;
                            a[i] = hv > 0.0 ? hv : 0.0;
                            aq[i] = a[i] * a[i], ea2[i] = ea * ea;
                          },
                          st));
    // o = a W2^T + b2; d = norm (o - Y) with the reference's two roundings of it.
    MGK_CUBLAS_TRY(ctx, gemm(bh, NL, DO, H, {a, H}, {W2, H, true}, ov));
    MGK_CUBLAS_TRY(ctx, gemm(bh, NL, DO, H, {a, H}, {W2a, H, true}, om));
    MGK_CUBLAS_TRY(ctx, gemm(bh, NL, DO, H, {ea2, H}, {W2q, H, true}, ovar));
    MGK_CUDA_TRY(ctx, o::for_each(
                          NL * DO,
                          [=] __device__(int64_t i) {
                            const double ovv = ov[i] + b2[i % DO], e = ovv - Y[i];
                            const double eo = fabs(ovv) + acc_o * (om[i] + b2a[i % DO]) + lam * sqrt(ovar[i]);
                            const double ed = norm * (eo + 2.0 * fabs(e));
                            dd[i] = norm * e, dda[i] = fabs(dd[i]), ddq[i] = dd[i] * dd[i], ed2[i] = ed * ed;
                          },
                          st));
    // dW2 = d^T a and db2 = 1^T d, into the flat G (values), FM (sum |terms|), FV (variance).
    double *gW2 = G + d.off_W2(), *mW2 = FM + d.off_W2(), *vW2 = FV + d.off_W2();
    MGK_CUBLAS_TRY(ctx, gemm(bh, DO, H, NL, {dd, DO, true}, {a, H}, gW2));
    MGK_CUBLAS_TRY(ctx, gemm(bh, DO, H, NL, {dda, DO, true}, {a, H}, mW2));
    MGK_CUBLAS_TRY(ctx, gemm(bh, DO, H, NL, {ed2, DO, true}, {aq, H}, vW2));
    MGK_CUBLAS_TRY(ctx, o::dgemm(bh, true, false, DO, H, NL, ddq, DO, ea2, H, 1.0, vW2, H));
    MGK_CUBLAS_TRY(ctx, gemm(bh, 1, DO, NL, {ones, NL}, {dd, DO}, G + d.off_b2()));
    MGK_CUBLAS_TRY(ctx, gemm(bh, 1, DO, NL, {ones, NL}, {dda, DO}, FM + d.off_b2()));
    MGK_CUBLAS_TRY(ctx, gemm(bh, 1, DO, NL, {ones, NL}, {ed2, DO}, FV + d.off_b2()));
    // da = d W2, then dh = da where h > 0 (both sides where the mask may flip).
    MGK_CUBLAS_TRY(ctx, gemm(bh, NL, H, DO, {dd, DO}, {W2, H}, da));
    MGK_CUBLAS_TRY(ctx, gemm(bh, NL, H, DO, {dda, DO}, {W2a, H}, dam));
    MGK_CUBLAS_TRY(ctx, gemm(bh, NL, H, DO, {ed2, DO}, {W2q, H}, dav));
    MGK_CUDA_TRY(ctx, o::for_each(
                          NL * H,
                          [=] __device__(int64_t i) {
                            const double eda = fabs(da[i]) + acc_da * dam[i] + lam * sqrt(dav[i]);
                            const bool on = h[i] > 0.0, flip = fabs(h[i]) <= tau[i];
                            const double e = (on || flip ? eda : 0.0) + (flip ? fabs(da[i]) / u : 0.0);
                            da[i] = on ? da[i] : 0.0;  // dh
                            dam[i] = fabs(da[i]);
                            dav[i] = e * e;
                          },
                          st));
    // dW1 = dh^T X and db1 = 1^T dh.
    MGK_CUBLAS_TRY(ctx, gemm(bh, H, DI, NL, {da, H, true}, {X, DI}, G));
    MGK_CUBLAS_TRY(ctx, gemm(bh, H, DI, NL, {dam, H, true}, {Xa, DI}, FM));
    MGK_CUBLAS_TRY(ctx, gemm(bh, H, DI, NL, {dav, H, true}, {Xq, DI}, FV));
    MGK_CUBLAS_TRY(ctx, gemm(bh, 1, H, NL, {ones, NL}, {da, H}, G + d.off_b1()));
    MGK_CUBLAS_TRY(ctx, gemm(bh, 1, H, NL, {ones, NL}, {dam, H}, FM + d.off_b1()));
    MGK_CUBLAS_TRY(ctx, gemm(bh, 1, H, NL, {ones, NL}, {dav, H}, FV + d.off_b1()));
    // This rank's gradient is rounded to bf16 once more (the GEMMs' outputs).
    double *S = out.g;
    const bool first = r == 0;
    MGK_CUDA_TRY(ctx, o::for_each(
                          N,
                          [=] __device__(int64_t i) {
                            const double er = fabs(G[i]) + acc_g * FM[i] + lam * sqrt(FV[i]);
                            S[i] = (first ? 0.0 : S[i]) + G[i];
                            A[i] = (first ? 0.0 : A[i]) + fabs(G[i]);
                            Q[i] = (first ? 0.0 : Q[i]) + er * er;
                          },
                          st));
  }
  // The reduction over ranks rounds every partial sum (at most W - 1 of them, each at most
  // sum_r |g_r|); the ranks' own errors are independent (their data are), so they add in
  // quadrature; the division by W rounds once more.
  double *S = out.g, *E = out.e;
  MGK_CUDA_TRY(ctx, o::for_each(
                        N,
                        [=] __device__(int64_t i) {
                          const double mean = S[i] / W;
                          E[i] = ((W - 1) * A[i] + sqrt(Q[i])) / W + fabs(mean);
                          S[i] = mean;
                        },
                        st));
  return 0;
}

// mean_gradient at rank 0's parameters (the inputs X, Y, W1, b1, W2, b2: generators g[0..5]),
// into mg's three arrays, taken from `scratch`. 0, or non-zero with ctx->error set.
inline int mean_gradient_at_rank0(mgk_ctx* ctx, o::Blas& blas, const Dims& d, const mgk_input_gen* g,
                                  o::Scratch& scratch, MeanGradient& mg, cudaStream_t st) {
  mg = {scratch.get<double>(d.numel()), scratch.get<double>(d.numel()), scratch.get<double>(d.numel())};
  if (!scratch.ok()) return mgk::set_error(ctx, "oracle: out of device memory");
  MGK_CUDA_TRY(ctx, load_params(d, g + 2, 0, mg.p, st));
  return mean_gradient(ctx, blas, d, g[0], g[1], mg, st);
}

// Expected outputs (double) and their scales (float) for a flat index range: segment k
// holds flat indices [start[k], start[k+1]).
struct Targets {
  int count = 0;
  int64_t start[5] = {};
  double* expected[4] = {};
  float* scale[4] = {};
  __device__ int64_t find(int64_t i, int* k) const {
    int j = 0;
    while (j + 1 < count && i >= start[j + 1]) ++j;
    *k = j;
    return i - start[j];
  }
};

// Outputs first .. first + 3 of the oracle's args as the segments W1, b1, W2, b2.
inline Targets param_targets(const Dims& d, const mgk_oracle_args* args, int first) {
  Targets t;
  t.count = 4;
  const int64_t starts[5] = {0, d.off_b1(), d.off_W2(), d.off_b2(), d.numel()};
  for (int k = 0; k < 5; ++k) t.start[k] = starts[k];
  for (int k = 0; k < 4; ++k) {
    t.expected[k] = static_cast<double*>(args->expected[first + k]);
    t.scale[k] = args->scale[first + k];
  }
  return t;
}

// Output `o` of the oracle's args as the one segment [lo, hi).
inline Targets one_target(int64_t lo, int64_t hi, const mgk_oracle_args* args, int o) {
  Targets t;
  t.count = 1;
  t.start[0] = lo;
  t.start[1] = hi;
  t.expected[0] = static_cast<double*>(args->expected[o]);
  t.scale[0] = args->scale[o];
  return t;
}

// The Adam step from zero moments, exactly, for flat indices [lo, hi) of `mg`:
//   m = (1 - b1) g,  v = (1 - b2) g^2,  p' = p - lr * r,  r = (m / bc1) / (sqrt(v / bc2) + eps),
// with bounds: m and v carry g's error (v to second order) plus their rounding; r is
// c sign(g) (c = ((1 - b1) / bc1) / k, k = sqrt((1 - b2) / bc2)) up to eps, so it carries
// g's error only through eps (c eps E_g / (g^2 k)), or fully (2c) where g's sign is within
// twice its error, plus 8 roundings of its own (the reference's op chain); p' adds its rounding.
// A Targets with count 0 is not written (ZeRO: full parameters, moments of a shard).
inline cudaError_t adam(const Dims& d, const MeanGradient& mg, int64_t lo, int64_t hi, Targets p_out, Targets m_out,
                        Targets v_out, cudaStream_t st) {
  const double u = o::kBf16U, bc1 = d.bc1(), k = std::sqrt((1.0 - kBeta2) / d.bc2());
  const double c = ((1.0 - kBeta1) / bc1) / k;
  const double *P = mg.p, *G = mg.g, *E = mg.e;
  return o::for_each(
      hi - lo,
      [=] __device__(int64_t j) {
        const int64_t i = lo + j;
        const double g = G[i], e = E[i], ag = fabs(g);
        const double m = (1.0 - kBeta1) * g, v = (1.0 - kBeta2) * g * g;
        const double r = ((1.0 - kBeta1) / bc1) * g / (ag * k + kEps);
        const double p = P[i] - kLr * r;
        double eps_part = 2.0 * c / u;
        if (ag > 0.0) eps_part = fmin(eps_part, c * kEps * e / (g * g * k));
        const double sign_part = ag <= 2.0 * u * e ? 2.0 * c / u : 0.0;
        int seg;
        if (p_out.count) {
          const int64_t at = p_out.find(i, &seg);
          p_out.expected[seg][at] = p;
          p_out.scale[seg][at] = float(fabs(p) + kLr * (8.0 * fabs(r) + eps_part + sign_part));
        }
        if (m_out.count) {
          const int64_t at = m_out.find(i, &seg);
          m_out.expected[seg][at] = m;
          m_out.scale[seg][at] = float((1.0 - kBeta1) * e + fabs(m));
        }
        if (v_out.count) {
          const int64_t at = v_out.find(i, &seg);
          v_out.expected[seg][at] = v;
          v_out.scale[seg][at] = float((1.0 - kBeta2) * (2.0 * ag * e + u * e * e) + v);
        }
      },
      st);
}

}  // namespace dp::oracle
