// Reference: ParallelKernelBench's two-stage pipeline of attention blocks on cuBLASLt, cuDNN
// and NCCL. Rank R is stage p = R / CP at CP position c = R % CP (PKB's layout: the CP groups
// are contiguous blocks of ranks, one per stage; the PP groups are strided by CP). The CP group
// is split from the harness's communicator once, at setup; the hand-off between stages is a
// send/recv over the harness's communicator (peers R + CP and R - CP: the PP group). Per call:
// stage 0 takes hidden_states, a later stage receives the previous stage's output from rank
// R - CP (ncclRecv into its own buffer) and ignores its hidden_states; the attention block of
// ../attention_block.cuh (q, k, v = x w_qkv^T on cuBLASLt, bf16 as PKB's F.linear rounds; the
// causal ring of ../ring_common.cuh over the stage's CP group; out = ctx w_o^T, bf16), which a
// stage with a next one sends to rank R + CP (ncclSend).
#include "../attention_block.cuh"

namespace {

struct RingAttentionPp : mgk::Reference {
  using Reference::Reference;
  const int64_t PP = dim("PP"), CP = dim("CP"), B = dim("B"), S = dim("S"), T = dim("T"), NH = dim("NH"), D = dim("D"),
                E = dim("E"), DM = dim("DM");
  const int stage = int(rank() / CP), position = int(rank() % CP);  // p and c above
  mgk::SplitComm cp;
  mgk::DeviceBuffer<__nv_bfloat16> x_in;  // [B, S, DM]: the previous stage's output
  ring::AttentionBlock block;

  int setup() {
    const int p = stage, c = position;
    if (comm())  // collective over every rank: each joins its stage's CP group
      MGK_NCCL_TRY(ctx, ncclCommSplit(comm(), p, c, cp.out(), nullptr));
    if (p > 0) {  // zeros until the first receive (and for ever when timed without communication)
      MGK_CUDA_TRY(ctx, x_in.allocate(B * S * DM));
      MGK_CUDA_TRY(ctx, cudaMemset(x_in, 0, size_t(B * S * DM) * 2));
    }
    return block.setup(ctx, B, S, NH, D, DM, int(CP));
  }

  // in: hidden_states, w_qkv, w_o. out: out.
  int run(const mgk_tensor* in, const mgk_tensor* out, cudaStream_t st) {
    const int p = stage, c = position;
    const size_t n = size_t(B * S * DM);
    const void* x = in[0].data;
    if (p > 0) {
      MGK_NCCL_STEP(ctx, ncclRecv(x_in, n, ncclBfloat16, rank() - int(CP), comm(), st));
      x = x_in;
    }
    if (block.run(ctx, cp, c, int(CP), x, in[1].data, in[2].data, out[0].data, st)) return 1;
    if (p + 1 < PP) MGK_NCCL_STEP(ctx, ncclSend(out[0].data, n, ncclBfloat16, rank() + int(CP), comm(), st));
    return 0;
  }

  int oracle(const mgk_oracle_args* a, cudaStream_t st);  // below, after its kernels
};

// ---- Oracle -------------------------------------------------------------------------------
//
// Every error magnitude below is in units of u = 2^-8 and bounds the standard deviation of
// the error it describes (a rounding to bf16 of a value z: |z|), so that independent errors
// add in quadrature and the one lambda = 4 is applied once, at the output (applied at every
// product instead, it would multiply up through the two stages). An error carried from a
// stage's inputs has two parts: `ind`, independent between sequence positions (this
// element's own roundings), and `cor`, which may be shared by many positions (whatever a
// position took from other positions' keys and values). A sum over positions weighted by
// attention probabilities adds the ind parts in quadrature and the cor parts linearly (worst
// case); a sum over the columns of a random weight matrix adds both in quadrature, whatever
// their correlation.

// The one multiplier of the error model (standard deviations to a bound), applied at the
// output; the score errors' exact term (stage_attention_oracle) applies it to each score.
constexpr double kLambda = 4.0;

// One warp per output row (b, i, h) of CP position `rank` (lanes over D <= 128): the exact
// causal attention of q ([B, S, H, D]) over keys 0 .. rank S + i of k, v ([B, T, H, D]), and
// its error magnitudes with the inputs' (qi, qc, ki, kc, vi, vc):
//   own roundings (ind): the output |o|, each CP block's partial output (bf16 O_blk; the
//     block's share sum_{j in blk} p_j v_j), P rounded to bf16 (sum_j p_j^2 v_j^2, quadrature),
//     and q's errors through the scores (one query: linear over the keys);
//   carried (cor): v's ind errors (sum_j p_j^2 vi_j^2) and cor errors (sum_j p_j vc_j), k's
//     ind errors through the scores (quadrature over keys) and cor errors (linear), q's cor
//     errors; plus fp32 accumulation of P V over T terms and fp32 score errors
//     ((A_T + 2 A_D max_j scale |q|.|k_j|) sum_j p_j |v_j|, worst case).
// A score error moves the output by d o_c / d s_j = p_j (v_jc - o_c); a score's error from q
// (or k) is scale sqrt(sum_d qerr_d^2 k_jd^2) (or with q and kerr), independent over d.
// That first order holds for small score errors only. A token with massive activations has a
// score whose error (its key's rounding) is of order one or more, and moves o by
//   o' - o = sum_j p_j (e^delta_j - 1) (v_j - o) / sum_j p_j e^delta_j,
// which with |delta_j| <= d_j (lambda times the four score errors) is at most
// E = sum_j p_j expm1(d_j) |v_j - o| / sum_j p_j e^-d_j, and never more than the spread of the
// values about o (o' is a mean of them). Where E exceeds the first order at lambda
// (L = sum_j p_j d_j |v_j - o|), the excess (E - L) / lambda joins cor; where the spread caps E
// below L, the first-order terms shrink by E / L.
__global__ void stage_attention_oracle(const double* q, const double* qi, const double* qc, const double* k,
                                       const double* ki, const double* kc, const double* v, const double* vi,
                                       const double* vc, double* expected, double* ind, double* cor, int rank,
                                       int64_t B, int64_t S, int64_t T, int64_t H, int64_t D) {
  constexpr int kCols = 4;  // D <= 128 = 4 x 32 lanes
  const int64_t rows = B * S * H, lane = threadIdx.x % 32;
  const double sm = 1.0 / sqrt(double(D));
  const double acc_t = mgk::oracle::fp32_accumulation(T), acc_d = mgk::oracle::fp32_accumulation(D);
  for (int64_t row = (blockIdx.x * int64_t(blockDim.x) + threadIdx.x) / 32; row < rows;
       row += int64_t(gridDim.x) * blockDim.x / 32) {
    const int64_t h = row % H, i = (row / H) % S, b = row / (H * S), g = rank * S + i;
    double qv[kCols], qiv[kCols], qcv[kCols];
    for (int t = 0; t < kCols; ++t) {
      const bool in = lane + 32 * t < D;
      const int64_t e = row * D + lane + 32 * t;
      qv[t] = in ? q[e] : 0.0;
      qiv[t] = in ? qi[e] : 0.0;
      qcv[t] = in ? qc[e] : 0.0;
    }
    auto key = [&](int64_t j) { return ((b * T + j) * H + h) * D; };
    auto reduce = [&](double x) {
      for (int off = 16; off; off /= 2) x += __shfl_xor_sync(0xffffffffu, x, off);
      return x;
    };
    auto score = [&](int64_t j) {
      double dot = 0;
      for (int t = 0; t < kCols; ++t)
        if (lane + 32 * t < D) dot += qv[t] * k[key(j) + lane + 32 * t];
      return reduce(dot) * sm;
    };
    // Pass 1: the row's max score, normaliser and largest scale |q|.|k_j|.
    double m = -INFINITY, z = 0, mag_max = 0;
    for (int64_t j = 0; j <= g; ++j) {
      double mag = 0;
      for (int t = 0; t < kCols; ++t)
        if (lane + 32 * t < D) mag += fabs(qv[t] * k[key(j) + lane + 32 * t]);
      const double x = score(j), m2 = fmax(m, x);
      z = z * exp(m - m2) + exp(x - m2);
      m = m2;
      mag_max = fmax(mag_max, reduce(mag) * sm);
    }
    // Pass 2: o and the terms that do not need it, per column.
    double o[kCols] = {}, pv[kCols] = {}, pv2[kCols] = {}, part[kCols] = {}, blk2[kCols] = {}, vi2[kCols] = {},
           vcl[kCols] = {};
    for (int64_t j = 0; j <= g; ++j) {
      const double pj = exp(score(j) - m) / z;
      const bool block_end = j == g || j % S == S - 1;
      for (int t = 0; t < kCols; ++t) {
        if (lane + 32 * t >= D) continue;
        const int64_t at = key(j) + lane + 32 * t;
        const double vj = v[at];
        o[t] += pj * vj;
        pv[t] += pj * fabs(vj);
        pv2[t] += pj * pj * vj * vj;
        part[t] += pj * vj;
        vi2[t] += pj * pj * vi[at] * vi[at];
        vcl[t] += pj * vc[at];
        if (block_end) {
          blk2[t] += part[t] * part[t];
          part[t] = 0;
        }
      }
    }
    // Pass 3: the score errors' terms, which need o (in units of u; first_order, moved and
    // spread in the output's own units, at lambda).
    double qpi[kCols] = {}, qpc[kCols] = {}, kpi2[kCols] = {}, kpc[kCols] = {};
    double first_order[kCols] = {}, moved[kCols] = {}, spread[kCols] = {}, kept = 0;
    for (int64_t j = 0; j <= g; ++j) {
      double sqi = 0, sqc = 0, ski = 0, skc = 0;
      for (int t = 0; t < kCols; ++t)
        if (lane + 32 * t < D) {
          const int64_t at = key(j) + lane + 32 * t;
          const double k2 = k[at] * k[at], q2 = qv[t] * qv[t];
          sqi += qiv[t] * qiv[t] * k2;
          sqc += qcv[t] * qcv[t] * k2;
          ski += q2 * ki[at] * ki[at];
          skc += q2 * kc[at] * kc[at];
        }
      sqi = sm * sqrt(reduce(sqi));
      sqc = sm * sqrt(reduce(sqc));
      ski = sm * sqrt(reduce(ski));
      skc = sm * sqrt(reduce(skc));
      const double pj = exp(score(j) - m) / z;
      const double dj = kLambda * mgk::oracle::kBf16U * (sqi + sqc + ski + skc);
      if (pj > 0) kept += pj * exp(-dj);
      for (int t = 0; t < kCols; ++t) {
        if (lane + 32 * t >= D) continue;
        const double off = fabs(v[key(j) + lane + 32 * t] - o[t]), a = pj * off;
        qpi[t] += a * sqi;
        qpc[t] += a * sqc;
        kpi2[t] += a * a * ski * ski;
        kpc[t] += a * skc;
        first_order[t] += a * dj;
        if (pj > 0 && off > 0) moved[t] += pj * expm1(dj) * off;  // 0 x inf is no move
        spread[t] = fmax(spread[t], off);
      }
    }
    double excess[kCols] = {};
    for (int t = 0; t < kCols; ++t) {
      const double exact = kept > 0 ? fmin(moved[t] / kept, spread[t]) : spread[t];
      if (exact < first_order[t]) {  // capped by the spread
        const double r = exact / first_order[t];
        qpi[t] *= r, qpc[t] *= r, kpi2[t] *= r * r, kpc[t] *= r;
      } else {
        excess[t] = (exact - first_order[t]) / (kLambda * mgk::oracle::kBf16U);
      }
    }
    for (int t = 0; t < kCols; ++t) {
      if (lane + 32 * t >= D) continue;
      const int64_t e = row * D + lane + 32 * t;
      expected[e] = o[t];
      ind[e] = sqrt(o[t] * o[t] + blk2[t] + pv2[t] + qpi[t] * qpi[t]);
      cor[e] = (acc_t + 2.0 * acc_d * mag_max) * pv[t] +
               sqrt(vi2[t] + vcl[t] * vcl[t] + qpc[t] * qpc[t] + kpi2[t] + kpc[t] * kpc[t]) + excess[t];
    }
  }
}

cudaError_t launch_stage_attention_oracle(const double* q, const double* qi, const double* qc, const double* k,
                                          const double* ki, const double* kc, const double* v, const double* vi,
                                          const double* vc, double* expected, double* ind, double* cor, int rank,
                                          int64_t B, int64_t S, int64_t T, int64_t H, int64_t D, cudaStream_t st) {
  const int64_t warps = B * S * H;
  const int grid = int(std::min<int64_t>((warps * 32 + 127) / 128, 132 * 64));
  stage_attention_oracle<<<grid, 128, 0, st>>>(q, qi, qc, k, ki, kc, v, vi, vc, expected, ind, cor, rank, B, S, T, H,
                                               D);
  return cudaGetLastError();
}

// out of rank (p, c), exactly (fp64), stage after stage from the regenerated inputs: stage 0
// from the hidden_states of ranks (0, 0) .. (0, c); a later stage from the previous stage's
// exact outputs at those positions (which it therefore computes for every position up to c),
// each stage with the weights of its own ranks (sp, c'). Per stage and CP block c':
//   q, k, v = x w^T rounded to bf16 after an fp32 product over DM terms: ind = the rounding
//     |q| + A_DM |x|.|w| and the input's ind errors through w (sqrt(xi^2 . w^2)); cor = the
//     input's cor errors through w (sqrt(xc^2 . w^2)); stage 0's input is exact;
//   ctx and its ind, cor: stage_attention_oracle;
//   y = ctx w_o^T rounded to bf16 after an fp32 product over E terms: the next stage's input,
//     with ind = |y| + A_E |ctx|.|w_o| + sqrt(ci^2 . w_o^2) (its rounding to bf16 is what the
//     next stage receives) and cor = sqrt(cc^2 . w_o^2);
// and the last stage's scale = |y| + A_E |ctx|.|w_o| + lambda sqrt((ci^2 + cc^2) . w_o^2).
int RingAttentionPp::oracle(const mgk_oracle_args* a, cudaStream_t st) {
  namespace o = mgk::oracle;
  // By value into the device lambdas:
  const int64_t B = this->B, S = this->S, T = this->T, NH = this->NH, D = this->D, E = this->E, DM = this->DM,
                CP = this->CP;
  const int64_t BS = B * S;
  if (D > 128) return mgk::set_error(ctx, "oracle: D = %lld > 128", (long long)D);
  const int p = stage, c = position;
  const int64_t blocks = c + 1;  // CP blocks 0 .. c of the stage's sequence
  const double acc_m = o::fp32_accumulation(DM), acc_e = o::fp32_accumulation(E);
  o::Scratch s(st);
  // This block's input and its magnitudes: |x|, xi^2, xc^2.
  double *X = s.get<double>(BS * DM), *Xa = s.get<double>(BS * DM), *Xi2 = s.get<double>(BS * DM),
         *Xc2 = s.get<double>(BS * DM);
  // One row block of w_qkv (q, k or v) and its |w|, w^2; the products.
  double *W = s.get<double>(E * DM), *Wa = s.get<double>(E * DM), *W2 = s.get<double>(E * DM);
  double *P = s.get<double>(BS * E), *M = s.get<double>(BS * E), *Vi = s.get<double>(BS * E),
         *Vc = s.get<double>(BS * E);
  // q of this block, k and v of the whole sequence, with their ind and cor errors.
  double *q = s.get<double>(BS * E), *qi = s.get<double>(BS * E), *qc = s.get<double>(BS * E);
  double *k = s.get<double>(B * T * E), *ki = s.get<double>(B * T * E), *kc = s.get<double>(B * T * E);
  double *v = s.get<double>(B * T * E), *vi = s.get<double>(B * T * E), *vc = s.get<double>(B * T * E);
  double *cx = s.get<double>(BS * E), *ci = s.get<double>(BS * E), *cc = s.get<double>(BS * E);
  double *Wo = s.get<double>(DM * E), *Woa = s.get<double>(DM * E), *Wo2 = s.get<double>(DM * E);
  double *y = s.get<double>(BS * DM), *ym = s.get<double>(BS * DM), *yi = s.get<double>(BS * DM),
         *yc = s.get<double>(BS * DM);
  // Stage outputs of blocks 0 .. c (value, ind, cor), the one being computed and the previous.
  double* stage_out[2][3] = {};
  if (p > 0)
    for (auto& set : stage_out)
      for (double*& t : set) t = s.get<double>(blocks * BS * DM);
  if (!s.ok()) return mgk::set_error(ctx, "oracle: out of device memory");
  cublasHandle_t h = oracle_blas(st);
  if (!h) return 1;
  for (int sp = 0; sp <= p; ++sp) {
    const bool last = sp == p, exact_in = sp == 0;
    double* const* prev = stage_out[(sp + 1) % 2];
    double* const* next = stage_out[sp % 2];
    for (int cb = 0; cb < blocks; ++cb) {
      const int holder = int(sp * CP + cb);
      const bool attend = !last || cb == c;  // the last stage needs position c's output only
      if (exact_in) {
        MGK_CUDA_TRY(ctx, o::regen(a->gens[0], holder, DM, 0, 0, BS, DM, X, DM, st));
      } else {
        const int64_t off = cb * BS * DM;
        const double *py = prev[0] + off, *pi = prev[1] + off, *pc = prev[2] + off;
        MGK_CUDA_TRY(ctx, o::for_each(
                              BS * DM,
                              [=] __device__(int64_t e) {
                                X[e] = py[e];
                                Xi2[e] = pi[e] * pi[e];
                                Xc2[e] = pc[e] * pc[e];
                              },
                              st));
      }
      MGK_CUDA_TRY(ctx, o::for_each(
                            BS * DM, [=] __device__(int64_t e) { Xa[e] = fabs(X[e]); }, st));
      for (int part = attend ? 0 : 1; part < 3; ++part) {  // q, k, v
        MGK_CUDA_TRY(ctx, o::regen(a->gens[1], holder, DM, part * E, 0, E, DM, W, DM, st));
        MGK_CUDA_TRY(ctx, o::for_each(
                              E * DM, [=] __device__(int64_t e) { Wa[e] = fabs(W[e]), W2[e] = W[e] * W[e]; }, st));
        MGK_CUBLAS_TRY(ctx, o::dgemm(h, false, true, BS, E, DM, X, DM, W, DM, 0.0, P, E));
        MGK_CUBLAS_TRY(ctx, o::dgemm(h, false, true, BS, E, DM, Xa, DM, Wa, DM, 0.0, M, E));
        if (!exact_in) {
          MGK_CUBLAS_TRY(ctx, o::dgemm(h, false, true, BS, E, DM, Xi2, DM, W2, DM, 0.0, Vi, E));
          MGK_CUBLAS_TRY(ctx, o::dgemm(h, false, true, BS, E, DM, Xc2, DM, W2, DM, 0.0, Vc, E));
        }
        // Row (b, i) of the block is position cb S + i of the stage's sequence.
        const int64_t c0 = cb;
        double* const dst[3][3] = {{q, qi, qc}, {k, ki, kc}, {v, vi, vc}};
        double *dv = dst[part][0], *di = dst[part][1], *dc = dst[part][2];
        const bool whole_sequence = part > 0;
        MGK_CUDA_TRY(ctx, o::for_each(
                              BS * E,
                              [=] __device__(int64_t e) {
                                const int64_t row = e / E, col = e % E, b = row / S, i = row % S;
                                const int64_t at = whole_sequence ? (b * T + c0 * S + i) * E + col : e;
                                const double own = fabs(P[e]) + acc_m * M[e];
                                dv[at] = P[e];
                                di[at] = exact_in ? own : sqrt(own * own + Vi[e]);
                                dc[at] = exact_in ? 0.0 : sqrt(Vc[e]);
                              },
                              st));
      }
      if (!attend) continue;
      MGK_CUDA_TRY(ctx,
                   launch_stage_attention_oracle(q, qi, qc, k, ki, kc, v, vi, vc, cx, ci, cc, cb, B, S, T, NH, D, st));
      MGK_CUDA_TRY(ctx, o::regen(a->gens[2], holder, E, 0, 0, DM, E, Wo, E, st));
      MGK_CUDA_TRY(ctx, o::for_each(
                            DM * E, [=] __device__(int64_t e) { Woa[e] = fabs(Wo[e]), Wo2[e] = Wo[e] * Wo[e]; }, st));
      MGK_CUBLAS_TRY(ctx, o::dgemm(h, false, true, BS, DM, E, cx, E, Wo, E, 0.0, y, DM));
      // |ctx|, ci^2, cc^2 in place: ctx itself is no longer needed.
      MGK_CUDA_TRY(ctx, o::for_each(
                            BS * E,
                            [=] __device__(int64_t e) {
                              cx[e] = fabs(cx[e]);
                              ci[e] = ci[e] * ci[e];
                              cc[e] = cc[e] * cc[e];
                            },
                            st));
      MGK_CUBLAS_TRY(ctx, o::dgemm(h, false, true, BS, DM, E, cx, E, Woa, E, 0.0, ym, DM));
      MGK_CUBLAS_TRY(ctx, o::dgemm(h, false, true, BS, DM, E, ci, E, Wo2, E, 0.0, yi, DM));
      MGK_CUBLAS_TRY(ctx, o::dgemm(h, false, true, BS, DM, E, cc, E, Wo2, E, 0.0, yc, DM));
      if (last) {
        auto* Y = static_cast<double*>(a->expected[0]);
        float* scale = a->scale[0];
        MGK_CUDA_TRY(ctx, o::for_each(
                              BS * DM,
                              [=] __device__(int64_t e) {
                                Y[e] = y[e];
                                scale[e] = float(fabs(y[e]) + acc_e * ym[e] + kLambda * sqrt(yi[e] + yc[e]));
                              },
                              st));
      } else {
        const int64_t off = cb * BS * DM;
        double *ny = next[0] + off, *ni = next[1] + off, *nc = next[2] + off;
        MGK_CUDA_TRY(ctx, o::for_each(
                              BS * DM,
                              [=] __device__(int64_t e) {
                                ny[e] = y[e];
                                ni[e] = fabs(y[e]) + acc_e * ym[e] + sqrt(yi[e]);
                                nc[e] = sqrt(yc[e]);
                              },
                              st));
      }
    }
  }
  return 0;
}

}  // namespace

MGK_REFERENCE(RingAttentionPp)
