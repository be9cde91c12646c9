// Reference, as ParallelKernelBench's PyTorch code computes it, with every bf16 rounding of
// its tensor ops, without its host synchronisations and with its seven scalar all-reduces
// grouped into three NCCL calls of one group (the sums in bf16 per element, as separate
// calls would give them):
//   1. logits = hidden weight^T on cuBLASLt (bf16 out, fp32 accumulation), M x V;
//   2. one block per token: log_softmax of its bf16 logits in fp32, rounded to bf16 at the
//      label (PyTorch's cross_entropy on bf16), then delta, ratio, -ratio * adv and the
//      other per-token terms with PyTorch's bf16 roundings;
//   3. one block adds the terms over the rank's tokens (CUB, fp32, each sum rounded to bf16
//      as torch.sum of a bf16 tensor) and takes min and max of the ratio;
//   4. NCCL: the valid count (fp32 sum), the four bf16 sums, max and -min (bf16 max);
//   5. one thread divides by the count and forms loss = (true_pg + s) - s in fp32.
#include <cub/block/block_reduce.cuh>

#include "mgk/lt_gemm.h"
#include "mgk/reference_kit.h"

namespace {

constexpr int kRowThreads = 256, kMaxVecs = 16;  // a row of V <= 32768 bf16 in registers
constexpr int kSumThreads = 1024;
constexpr float kClamp = 20.0f;

// The scalars the ranks exchange, each in its own 16 bytes.
struct Comm {
  float count;  // valid tokens (fp32 sum)
  float pad0[3];
  __nv_bfloat16 sums[8];  // pg, ratio, k3, cross-entropy (bf16 sum); [4]: the local surrogate
  __nv_bfloat16 extremes[8];  // max ratio, -min ratio (bf16 max)
};

__device__ inline float bf(float v) { return __bfloat162float(__float2bfloat16_rn(v)); }

struct MaxOp {  // for CUB's block reductions (NaN-free data)
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
  __device__ double operator()(double a, double b) const { return fmax(a, b); }
};

// One block per token.
__global__ void __launch_bounds__(kRowThreads)
    token_kernel(const __nv_bfloat16* logits, int64_t v, const int64_t* labels, const __nv_bfloat16* old_logprobs,
                 const __nv_bfloat16* advantages, __nv_bfloat16* logprobs, __nv_bfloat16* token_loss, float4* terms) {
  using Reduce = cub::BlockReduce<float, kRowThreads>;
  __shared__ typename Reduce::TempStorage tmp;
  __shared__ float s_max, s_sum;
  const int64_t t = blockIdx.x;
  const int64_t label = labels[t];
  const bool valid = label >= 0;  // every negative label is ignore_index
  float ce = 0;
  if (valid) {  // the block's branch is uniform
    const uint4* row = reinterpret_cast<const uint4*>(logits + t * v);
    const int vecs = int(v / 8);
    uint4 x[kMaxVecs];
    float top = -INFINITY;
#pragma unroll
    for (int k = 0; k < kMaxVecs; ++k) {
      const int i = threadIdx.x + k * kRowThreads;
      if (i < vecs) {
        x[k] = row[i];
        const auto* h = reinterpret_cast<const __nv_bfloat162*>(&x[k]);
        for (int e = 0; e < 4; ++e) {
          const float2 f = __bfloat1622float2(h[e]);
          top = fmaxf(top, fmaxf(f.x, f.y));
        }
      }
    }
    top = Reduce(tmp).Reduce(top, MaxOp());
    if (threadIdx.x == 0) s_max = top;
    __syncthreads();
    top = s_max;
    float sum = 0;
#pragma unroll
    for (int k = 0; k < kMaxVecs; ++k) {
      const int i = threadIdx.x + k * kRowThreads;
      if (i < vecs) {
        const auto* h = reinterpret_cast<const __nv_bfloat162*>(&x[k]);
        for (int e = 0; e < 4; ++e) {
          const float2 f = __bfloat1622float2(h[e]);
          sum += expf(f.x - top) + expf(f.y - top);
        }
      }
    }
    __syncthreads();  // tmp is reused
    sum = Reduce(tmp).Sum(sum);
    if (threadIdx.x == 0) s_sum = sum;
    __syncthreads();
    ce = -bf(__bfloat162float(logits[t * v + label]) - top - logf(s_sum));  // -log_softmax at the label, bf16
  }
  if (threadIdx.x != 0) return;
  const float adv = __bfloat162float(advantages[t]);
  const float delta = valid ? fminf(fmaxf(bf(-ce - __bfloat162float(old_logprobs[t])), -kClamp), kClamp) : 0.0f;
  const float ratio = bf(expf(delta));
  const float w = valid ? bf(ratio * adv) : 0.0f;
  logprobs[t] = __float2bfloat16_rn(-ce);
  token_loss[t] = __float2bfloat16_rn(-w);
  terms[t] = valid ? make_float4(bf(w * ce), ratio, bf(bf(ratio - delta) - 1.0f), ce) : make_float4(0, 0, 0, 0);
}

// One block: the rank's sums (fp32, rounded to bf16 as torch.sum of bf16 gives them), its
// valid count, the max and minus the min of its valid ratios.
__global__ void __launch_bounds__(kSumThreads)
    local_sums_kernel(const int64_t* labels, const __nv_bfloat16* token_loss, const float4* terms, int64_t m,
                      Comm* comm) {
  using Reduce = cub::BlockReduce<float, kSumThreads>;
  __shared__ typename Reduce::TempStorage tmp;
  float acc[7] = {0, 0, 0, 0, 0, 0, -INFINITY};  // pg, ratio, k3, ce, surrogate, count, max
  float lowest = INFINITY;
  for (int64_t t = threadIdx.x; t < m; t += kSumThreads) {
    const float4 x = terms[t];
    acc[0] += __bfloat162float(token_loss[t]), acc[1] += x.y, acc[2] += x.z, acc[3] += x.w, acc[4] += x.x;
    if (labels[t] >= 0) acc[5] += 1, acc[6] = fmaxf(acc[6], x.y), lowest = fminf(lowest, x.y);
  }
  float out[8];
  for (int k = 0; k < 6; ++k) {
    out[k] = Reduce(tmp).Sum(acc[k]);
    __syncthreads();
  }
  out[6] = Reduce(tmp).Reduce(acc[6], MaxOp());
  __syncthreads();
  out[7] = Reduce(tmp).Reduce(-lowest, MaxOp());
  if (threadIdx.x == 0) {
    comm->count = out[5];
    for (int k = 0; k < 5; ++k) comm->sums[k] = __float2bfloat16_rn(out[k]);
    comm->extremes[0] = __float2bfloat16_rn(out[6]), comm->extremes[1] = __float2bfloat16_rn(out[7]);
  }
}

__global__ void finish_kernel(const Comm* comm, float* loss, float* metrics) {
  const float n = fmaxf(comm->count, 1.0f);  // clamp(min = 1)
  const float true_pg = __bfloat162float(comm->sums[0]) / n;
  const float surrogate = __bfloat162float(comm->sums[4]) / n;  // local, not reduced: it cancels
  *loss = __fsub_rn(__fadd_rn(true_pg, surrogate), surrogate);
  metrics[0] = __bfloat162float(comm->sums[1]) / n;
  metrics[1] = -__bfloat162float(comm->extremes[1]);
  metrics[2] = __bfloat162float(comm->extremes[0]);
  metrics[3] = __bfloat162float(comm->sums[2]) / n;
  metrics[4] = __bfloat162float(comm->sums[3]) / n;
}

using mgk::oracle::kBf16U;
constexpr int kOracleRows = 1024;  // tokens per chunk of fp64 logits (1024 x V doubles: 262 MB)
constexpr int kSlots = 18;         // per rank sums of the oracle (see rank_sums_kernel)

// A token of any rank: its exact cross-entropy (0 when ignored) and the bound of the
// reference's error on it, in units of u = 2^-8.
struct Token {
  double ce, ece;
  int valid;
};

// One block per token of a chunk: the exact log-sum-exp of its fp64 logits and the bound
// |CE| (its rounding) + sum_j p_j |l_j| + |l_y| (the logits' bf16 rounding moves lse by at
// most sum_j p_j u |l_j|, and l_y by u |l_y|) + acc_n ||h|| (sum_j p_j ||w_j|| + ||w_y||)
// (their fp32 accumulation: sum_k |h_k w_jk| <= ||h|| ||w_j||) + acc_v (the fp32 sum of V
// exponentials) + the fp32 arithmetic of x - max - log(sum).
__global__ void exact_ce_kernel(const double* logits, int64_t v, const double* hidden, int64_t n, const double* wnorm,
                                mgk_input_gen labels, int rank, int64_t t0, double acc_n, double acc_v, Token* out) {
  using Reduce = cub::BlockReduce<double, 256>;
  __shared__ typename Reduce::TempStorage tmp;
  __shared__ double s_top, s_sum[4];
  const int64_t t = t0 + blockIdx.x;
  const int64_t label = int64_t(mgk::gen_value(labels, rank, t));
  if (label < 0) {
    if (threadIdx.x == 0) out[blockIdx.x] = {0, 0, 0};
    return;
  }
  const double* l = logits + blockIdx.x * v;
  double top = -INFINITY;
  for (int64_t j = threadIdx.x; j < v; j += blockDim.x) top = fmax(top, l[j]);
  top = Reduce(tmp).Reduce(top, MaxOp());
  if (threadIdx.x == 0) s_top = top;
  __syncthreads();
  top = s_top;
  double acc[4] = {0, 0, 0, 0};  // sum e, sum e |l|, sum e ||w||, ||h||^2
  for (int64_t j = threadIdx.x; j < v; j += blockDim.x) {
    const double e = exp(l[j] - top);
    acc[0] += e, acc[1] += e * fabs(l[j]), acc[2] += e * wnorm[j];
  }
  for (int64_t k = threadIdx.x; k < n; k += blockDim.x) acc[3] += hidden[blockIdx.x * n + k] * hidden[blockIdx.x * n + k];
  for (int q = 0; q < 4; ++q) {
    __syncthreads();
    const double s = Reduce(tmp).Sum(acc[q]);
    if (threadIdx.x == 0) s_sum[q] = s;
  }
  if (threadIdx.x != 0) return;
  const double lse = top + log(s_sum[0]), ce = lse - l[label];
  const double logit_terms = s_sum[1] / s_sum[0] + fabs(l[label]);
  const double accumulation = acc_n * sqrt(s_sum[3]) * (s_sum[2] / s_sum[0] + wnorm[label]) + acc_v;
  out[blockIdx.x] = {ce, fabs(ce) + logit_terms + accumulation + 0x1p-14 * (fabs(lse) + fabs(top)), 1};
}

// One block per rank: per token the exact delta, ratio, -ratio * adv and k3 with their
// bounds (units of u), summed into the rank's slots:
//   0 n, 1 sum pg, 2 sum e_pg, 3 sum |pg|, 4 sum r, 5 sum e_r, 6 sum k3, 7 sum e_k3, 8 sum |k3|,
//   9 sum ce, 10 sum e_ce, 11 sum |r a| ce, 12-14 min of r, r - u e_r, r + u e_r, 15-17 max of them.
// The block of this rank also writes the expected per-token outputs and their scales.
__global__ void rank_sums_kernel(const Token* tokens, int64_t m, mgk_input_gen old_gen, mgk_input_gen adv_gen, int me,
                                 double* sums, double* logprobs, float* logprobs_scale, double* token_loss,
                                 float* token_loss_scale) {
  __shared__ double part[256][kSlots];
  const int r = blockIdx.x;
  double a[kSlots] = {};
  for (int q = 12; q < 15; ++q) a[q] = INFINITY;
  for (int q = 15; q < 18; ++q) a[q] = -INFINITY;
  for (int64_t t = threadIdx.x; t < m; t += blockDim.x) {
    const Token x = tokens[r * m + t];
    if (!x.valid) {
      if (r == me) logprobs[t] = 0, logprobs_scale[t] = 0, token_loss[t] = 0, token_loss_scale[t] = 0;
      continue;
    }
    const double adv = mgk::gen_value(adv_gen, r, t), pre = -x.ce - mgk::gen_value(old_gen, r, t);
    double ed = x.ece + fabs(pre), delta = fmin(fmax(pre, -20.0), 20.0);
    if (fabs(pre) - 2 * kBf16U * ed > 20) ed = 0;  // certainly clamped: exactly +-20 in any order
    const double ratio = exp(delta), er = ratio * (expm1(kBf16U * ed) / kBf16U + 1);
    const double pg = -ratio * adv, epg = fabs(adv) * er + fabs(pg);
    const double k3 = ratio - delta - 1, ek = er + ed + fabs(ratio - delta) + fabs(k3);
    const double v[12] = {1, pg, epg, fabs(pg), ratio, er, k3, ek, fabs(k3), x.ce, x.ece, fabs(pg) * x.ce};
    for (int q = 0; q < 12; ++q) a[q] += v[q];
    const double lo = ratio - kBf16U * er, hi = ratio + kBf16U * er;
    a[12] = fmin(a[12], ratio), a[13] = fmin(a[13], lo), a[14] = fmin(a[14], hi);
    a[15] = fmax(a[15], ratio), a[16] = fmax(a[16], lo), a[17] = fmax(a[17], hi);
    if (r == me) logprobs[t] = -x.ce, logprobs_scale[t] = float(x.ece), token_loss[t] = pg, token_loss_scale[t] = float(epg);
  }
  for (int q = 0; q < kSlots; ++q) part[threadIdx.x][q] = a[q];
  __syncthreads();
  if (threadIdx.x >= kSlots) return;
  const int q = threadIdx.x;
  double s = part[0][q];
  for (int i = 1; i < blockDim.x; ++i)
    s = q < 12 ? s + part[i][q] : q < 15 ? fmin(s, part[i][q]) : fmax(s, part[i][q]);
  sums[r * kSlots + q] = s;
}

// The scalars, from every rank's slots. Scales are in units of u32 = 2^-24 (the outputs are
// fp32): 2^16 S for a bound S in units of u = 2^-8, the division's |value|, and for a min or
// max the half-width of the interval the rounded values may pick from.
__global__ void scalars_kernel(const double* sums, int world, int me, double acc_m, double* loss, float* loss_scale,
                               double* metrics, float* metrics_scale) {
  double g[kSlots] = {}, rank_abs[4] = {};  // rank_abs: sum over ranks of |P_r|, R_r, |K_r|, H_r
  for (int q = 12; q < 15; ++q) g[q] = INFINITY;
  for (int q = 15; q < 18; ++q) g[q] = -INFINITY;
  for (int r = 0; r < world; ++r) {
    const double* s = sums + r * kSlots;
    for (int q = 0; q < 12; ++q) g[q] += s[q];
    for (int q = 12; q < 15; ++q) g[q] = fmin(g[q], s[q]);
    for (int q = 15; q < 18; ++q) g[q] = fmax(g[q], s[q]);
    rank_abs[0] += fabs(s[1]), rank_abs[1] += s[4], rank_abs[2] += fabs(s[6]), rank_abs[3] += s[9];
  }
  const double n = fmax(g[0], 1.0);
  // A mean of bf16 terms: each term's error, the fp32 sum over a rank's tokens, the rank's
  // sum rounded to bf16 and W - 1 roundings of the all-reduce's partial sums (W sum |X_r|).
  auto mean = [&](double sum, double err, double abs, double ranks, double* value, float* scale) {
    *value = sum / n;
    *scale = float(0x1p16 * (err + acc_m * abs + world * ranks) / n + fabs(*value));
  };
  mean(g[1], g[2], g[3], rank_abs[0], loss, loss_scale);
  // (true_pg + s) - s in fp32: three roundings of values at most |true_pg| + |s|.
  *loss_scale += float(2 * fabs(*loss) + 2 * sums[me * kSlots + 11] / n);
  mean(g[4], g[5], g[4], rank_abs[1], &metrics[0], &metrics_scale[0]);
  metrics[1] = g[12], metrics_scale[1] = float(0x1p24 * fmax(g[12] - g[13], g[14] - g[12]));
  metrics[2] = g[15], metrics_scale[2] = float(0x1p24 * fmax(g[15] - g[16], g[17] - g[15]));
  mean(g[6], g[7], g[8], rank_abs[2], &metrics[3], &metrics_scale[3]);
  mean(g[9], g[10], g[9], rank_abs[3], &metrics[4], &metrics_scale[4]);
}

struct ImportanceSamplingLoss : mgk::Reference {
  using Reference::Reference;
  const int64_t M = dim("M"), N = dim("N"), V = dim("V");
  mgk::lt::Handle lt;
  mgk::lt::Gemm gemm;
  mgk::DeviceBuffer<__nv_bfloat16> logits;  // M x V
  mgk::DeviceBuffer<float4> terms;          // per token: surrogate term, ratio, k3, cross-entropy (0 if ignored)
  mgk::DeviceBuffer<Comm> scalars;          // one Comm: what the ranks exchange

  int setup() {
    if (V % 8 || V > int64_t(8) * kRowThreads * kMaxVecs)
      return mgk::set_error(ctx, "the reference needs V a multiple of 8 and at most 32768");
    MGK_CUDA_TRY(ctx, logits.allocate(M * V));
    MGK_CUDA_TRY(ctx, terms.allocate(M));
    MGK_CUDA_TRY(ctx, scalars.allocate(1));
    MGK_CUBLAS_TRY(ctx, lt.create());
    mgk::lt::GemmShape shape{M, V, N};
    shape.trans_b = true;  // weight is stored V x N: the product uses its transpose
    MGK_CUBLAS_TRY(ctx, gemm.plan(lt, shape));
    return 0;
  }

  int run(const mgk_tensor* in, const mgk_tensor* out, cudaStream_t st) {
    const auto* labels = static_cast<const int64_t*>(in[2].data);
    auto* token_loss = static_cast<__nv_bfloat16*>(out[2].data);
    Comm* c = scalars;
    MGK_CUBLAS_TRY(ctx, gemm.run(in[0].data, in[1].data, logits, st));
    token_kernel<<<unsigned(M), kRowThreads, 0, st>>>(logits, V, labels, static_cast<const __nv_bfloat16*>(in[3].data),
                                                       static_cast<const __nv_bfloat16*>(in[4].data),
                                                       static_cast<__nv_bfloat16*>(out[1].data), token_loss, terms);
    MGK_LAUNCH_CHECK(ctx);
    local_sums_kernel<<<1, kSumThreads, 0, st>>>(labels, token_loss, terms, M, c);
    MGK_LAUNCH_CHECK(ctx);
    MGK_NCCL_STEP(ctx, ncclGroupStart());
    MGK_NCCL_STEP(ctx, ncclAllReduce(&c->count, &c->count, 1, ncclFloat32, ncclSum, comm(), st));
    MGK_NCCL_STEP(ctx, ncclAllReduce(c->sums, c->sums, 4, ncclBfloat16, ncclSum, comm(), st));
    MGK_NCCL_STEP(ctx, ncclAllReduce(c->extremes, c->extremes, 2, ncclBfloat16, ncclMax, comm(), st));
    MGK_NCCL_STEP(ctx, ncclGroupEnd());
    finish_kernel<<<1, 1, 0, st>>>(c, static_cast<float*>(out[0].data), static_cast<float*>(out[3].data));
    MGK_LAUNCH_CHECK(ctx);
    return 0;
  }

  // Every rank's cross-entropies from its regenerated inputs (fp64 GEMM on cuBLAS by chunks of
  // tokens), then delta, ratio and the sums exactly, each with the bound of the reference's
  // error (statement.md: "Correctness").
  int oracle(const mgk_oracle_args* a, cudaStream_t st) {
    const int64_t N = this->N;  // by value into the device lambda
    const int world = this->world();
    const int64_t rows = std::min<int64_t>(M, kOracleRows);
    mgk::oracle::Scratch scratch(st);
    double *w = scratch.get<double>(V * N), *wnorm = scratch.get<double>(V), *h = scratch.get<double>(rows * N),
           *logits = scratch.get<double>(rows * V), *sums = scratch.get<double>(world * kSlots);
    Token* tokens = scratch.get<Token>(world * M);
    if (!scratch.ok()) return mgk::set_error(ctx, "oracle: out of device memory");
    cublasHandle_t handle = oracle_blas(st);
    if (!handle) return 1;
    const double acc_n = mgk::oracle::fp32_accumulation(N), acc_v = mgk::oracle::fp32_accumulation(V);
    for (int r = 0; r < world; ++r) {
      MGK_CUDA_TRY(ctx, mgk::oracle::regen(a->gens[1], r, N, 0, 0, V, N, w, N, st));
      MGK_CUDA_TRY(ctx, mgk::oracle::for_each(
                            V,
                            [=] __device__(int64_t j) {
                              double s = 0;
                              for (int64_t k = 0; k < N; ++k) s += w[j * N + k] * w[j * N + k];
                              wnorm[j] = sqrt(s);
                            },
                            st));
      for (int64_t t0 = 0; t0 < M; t0 += rows) {
        const int64_t count = std::min(rows, M - t0);
        MGK_CUDA_TRY(ctx, mgk::oracle::regen(a->gens[0], r, N, t0, 0, count, N, h, N, st));
        MGK_CUBLAS_TRY(ctx, mgk::oracle::dgemm(handle, false, true, count, V, N, h, N, w, N, 0, logits, V));
        exact_ce_kernel<<<unsigned(count), 256, 0, st>>>(logits, V, h, N, wnorm, a->gens[2], r, t0, acc_n, acc_v,
                                                         tokens + r * M + t0);
        MGK_LAUNCH_CHECK(ctx);
      }
    }
    rank_sums_kernel<<<unsigned(world), 256, 0, st>>>(tokens, M, a->gens[3], a->gens[4], rank(), sums,
                                                      static_cast<double*>(a->expected[1]), a->scale[1],
                                                      static_cast<double*>(a->expected[2]), a->scale[2]);
    MGK_LAUNCH_CHECK(ctx);
    scalars_kernel<<<1, 1, 0, st>>>(sums, world, rank(), mgk::oracle::fp32_accumulation(M),
                                    static_cast<double*>(a->expected[0]), a->scale[0],
                                    static_cast<double*>(a->expected[3]), a->scale[3]);
    MGK_LAUNCH_CHECK(ctx);
    return 0;
  }
};

}  // namespace

MGK_REFERENCE(ImportanceSamplingLoss)
