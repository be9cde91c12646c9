// Reference: ParallelKernelBench's 2-D (TP x FSDP) gated MLP on NCCL and cuBLASLt. The two
// sub-communicators are split from the harness's once, at setup (ParallelKernelBench makes
// new groups on every call; a real job keeps them): TP = the NTP consecutive ranks
// f NTP .. f NTP + NTP - 1, FSDP = the ranks t, t + NTP, ... Per call: the three weight
// shards all-gathered over FSDP in one NCCL group (W1 and W2 concatenated along rows arrive
// in place; W3's blocks are laid side by side, torch.cat along dim 1), x1 = x W1 and
// x2 = x W2 (bf16 GEMM outputs), z = bf16(bf16(silu(x1)) x2), y = z W3 (bf16) straight into
// the output, then ncclAllReduce (bf16 sum) over TP in place.
#include <algorithm>

#include "mgk/lt_gemm.h"
#include "mgk/reference_kit.h"

namespace {

using bf16 = __nv_bfloat16;

// z = bf16(bf16(silu(x1)) * x2): F.silu computes x / (1 + exp(-x)) in fp32 and rounds, the
// product rounds again.
__global__ void silu_mul(const bf16* x1, const bf16* x2, bf16* z, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const float a = __bfloat162float(x1[i]);
    const float s = __bfloat162float(__float2bfloat16(a / (1.0f + __expf(-a))));
    z[i] = __float2bfloat16(s * __bfloat162float(x2[i]));
  }
}

struct FsdpAndTp : mgk::Reference {
  using Reference::Reference;
  const int64_t NTP = dim("NTP"), NF = dim("NF"), BL = dim("BL"), DS = dim("DS"), D = dim("D"), FL = dim("FL");
  mgk::SplitComm tp, fsdp;
  mgk::DeviceBuffer<bf16> w1, w2, w3_blocks, w3;  // gathered weights
  mgk::DeviceBuffer<bf16> x1, x2, z;              // [BL, FL]
  mgk::lt::Handle lt;
  mgk::lt::Gemm up, down;

  int setup() {
    if (comm()) {  // collective over every rank: each rank joins one TP and one FSDP group
      const int f = int(rank() / NTP), t = int(rank() % NTP);
      MGK_NCCL_TRY(ctx, ncclCommSplit(comm(), f, t, tp.out(), nullptr));
      MGK_NCCL_TRY(ctx, ncclCommSplit(comm(), t, f, fsdp.out(), nullptr));
    }
    for (auto* w : {&w1, &w2, &w3_blocks, &w3}) {
      MGK_CUDA_TRY(ctx, w->allocate(D * FL));
      MGK_CUDA_TRY(ctx, cudaMemset(*w, 0, size_t(D * FL) * 2));  // defined values when timed without communication
    }
    for (auto* act : {&x1, &x2, &z}) MGK_CUDA_TRY(ctx, act->allocate(BL * FL));
    MGK_CUBLAS_TRY(ctx, lt.create());
    using S = mgk::lt::GemmShape;
    MGK_CUBLAS_TRY(ctx, up.plan(lt, S{BL, FL, D}));    // x [BL, D] W [D, FL]
    MGK_CUBLAS_TRY(ctx, down.plan(lt, S{BL, D, FL}));  // z [BL, FL] W3 [FL, D]
    return 0;
  }

  // in: x, W1_shard, W2_shard, W3_shard. out: y.
  int run(const mgk_tensor* in, const mgk_tensor* out, cudaStream_t st) {
    const size_t shard = size_t(DS * FL);
    if (comm()) {
      MGK_NCCL_TRY(ctx, ncclGroupStart());
      MGK_NCCL_TRY(ctx, ncclAllGather(in[1].data, w1, shard, ncclBfloat16, fsdp, st));
      MGK_NCCL_TRY(ctx, ncclAllGather(in[2].data, w2, shard, ncclBfloat16, fsdp, st));
      MGK_NCCL_TRY(ctx, ncclAllGather(in[3].data, w3_blocks, shard, ncclBfloat16, fsdp, st));
      MGK_NCCL_TRY(ctx, ncclGroupEnd());
    }
    MGK_CUDA_TRY(ctx, mgk::blocks_side_by_side(w3_blocks, shard * 2, w3, FL, DS, 2, int(NF), st));
    MGK_CUBLAS_TRY(ctx, up.run(in[0].data, w1, x1, st));
    MGK_CUBLAS_TRY(ctx, up.run(in[0].data, w2, x2, st));
    const int64_t n = BL * FL;
    silu_mul<<<int(std::min<int64_t>((n + 255) / 256, 132 * 16)), 256, 0, st>>>(x1, x2, z, n);
    MGK_LAUNCH_CHECK(ctx);
    MGK_CUBLAS_TRY(ctx, down.run(z, w3, out[0].data, st));
    if (NTP > 1 && tp)  // a TP group of one has nothing to add
      MGK_NCCL_TRY(ctx, ncclAllReduce(out[0].data, out[0].data, BL * D, ncclBfloat16, ncclSum, tp, st));
    return 0;
  }

  // y = sum over the TP group's ranks q (TP index t) of z_q W3_t, z_q = silu(x_q W1_t) * (x_q W2_t),
  // exactly (fp64, every weight block regenerated from the rank that holds it). Bounds in units
  // of u = 2^-8, propagated as problems/dp/dp_oracle.cuh does: every bf16 rounding adds the
  // magnitude of what it rounds; a K-term product adds fp32_accumulation(K) sum |a b| and carries
  // its operands' errors in quadrature, lambda = 4 (independent roundings of random data);
  // within one element the few sources add linearly.
  //   x1, x2: |x_i| + acc(D) (|x| |W_i|);  s = silu(x1): |s| + (|silu'(x1)| + u E1 / 2) E1
  //   (|silu''| <= 1/2);  z = s x2: |z| + |x2| E_s + |s| E2 + u E_s E2;
  //   y_t = z W3_t: |y_t| + acc(FL) (|z| |W3|) + lambda sqrt(E_z^2 W3^2);
  //   y: NCCL's bf16 ring rounds NTP - 1 partial sums, each at most sum_t |y_t|, and the
  //   ranks' own errors (independent data) add in quadrature: (NTP - 1) sum_t |y_t| + sqrt(sum_t E_t^2).
  int oracle(const mgk_oracle_args* a, cudaStream_t st) {
    namespace o = mgk::oracle;
    // By value into the device lambdas.
    const int64_t BL = this->BL, D = this->D, FL = this->FL, DS = this->DS, NF = this->NF, NTP = this->NTP;
    const int f = int(rank() / NTP);
    const double u = o::kBf16U, lam = 4.0, acc_d = o::fp32_accumulation(D), acc_f = o::fp32_accumulation(FL);
    o::Scratch s(st);
    double *X = s.get<double>(BL * D), *Xa = s.get<double>(BL * D);
    double *W1 = s.get<double>(D * FL), *W2 = s.get<double>(D * FL), *W3 = s.get<double>(FL * D);
    double *W1a = s.get<double>(D * FL), *W2a = s.get<double>(D * FL), *W3a = s.get<double>(FL * D),
           *W3q = s.get<double>(FL * D);
    double *x1 = s.get<double>(BL * FL), *m1 = s.get<double>(BL * FL), *x2 = s.get<double>(BL * FL),
           *m2 = s.get<double>(BL * FL), *za = s.get<double>(BL * FL), *eq = s.get<double>(BL * FL);
    double *yt = s.get<double>(BL * D), *ym = s.get<double>(BL * D), *yv = s.get<double>(BL * D);
    double *A = s.get<double>(BL * D), *Q = s.get<double>(BL * D);
    if (!s.ok()) return mgk::set_error(ctx, "oracle: out of device memory");
    cublasHandle_t h = oracle_blas(st);
    if (!h) return 1;
    auto* Y = static_cast<double*>(a->expected[0]);
    float* scale = a->scale[0];
    auto gemm = [&](int64_t m, int64_t n, int64_t k, const double* pa, const double* pb, double* c) {
      return o::dgemm(h, false, false, m, n, k, pa, k, pb, n, 0.0, c, n);
    };
    for (int t = 0; t < NTP; ++t) {
      const int q = int(f * NTP + t);
      MGK_CUDA_TRY(ctx, o::regen(a->gens[0], q, D, 0, 0, BL, D, X, D, st));
      for (int g = 0; g < NF; ++g) {  // the FSDP group of TP index t holds W1_t, W2_t, W3_t
        const int holder = int(g * NTP + t);
        MGK_CUDA_TRY(ctx, o::regen(a->gens[1], holder, FL, 0, 0, DS, FL, W1 + g * DS * FL, FL, st));
        MGK_CUDA_TRY(ctx, o::regen(a->gens[2], holder, FL, 0, 0, DS, FL, W2 + g * DS * FL, FL, st));
        MGK_CUDA_TRY(ctx, o::regen(a->gens[3], holder, DS, 0, 0, FL, DS, W3 + g * DS, D, st));
      }
      MGK_CUDA_TRY(ctx, o::for_each(BL * D, [=] __device__(int64_t i) { Xa[i] = fabs(X[i]); }, st));
      MGK_CUDA_TRY(ctx, o::for_each(
                            D * FL,
                            [=] __device__(int64_t i) {
                              W1a[i] = fabs(W1[i]), W2a[i] = fabs(W2[i]);
                              W3a[i] = fabs(W3[i]), W3q[i] = W3[i] * W3[i];
                            },
                            st));
      MGK_CUBLAS_TRY(ctx, gemm(BL, FL, D, X, W1, x1));
      MGK_CUBLAS_TRY(ctx, gemm(BL, FL, D, Xa, W1a, m1));
      MGK_CUBLAS_TRY(ctx, gemm(BL, FL, D, X, W2, x2));
      MGK_CUBLAS_TRY(ctx, gemm(BL, FL, D, Xa, W2a, m2));
      // z (into x1), |z| (za) and E_z^2 (eq).
      MGK_CUDA_TRY(ctx, o::for_each(
                            BL * FL,
                            [=] __device__(int64_t i) {
                              const double v1 = x1[i], v2 = x2[i];
                              const double e1 = fabs(v1) + acc_d * m1[i], e2 = fabs(v2) + acc_d * m2[i];
                              const double sg = 1.0 / (1.0 + exp(-v1)), sv = v1 * sg;
                              const double ds = fabs(sg * (1.0 + v1 * (1.0 - sg)));
                              const double es = fabs(sv) + (ds + 0.5 * u * e1) * e1;
                              const double zv = sv * v2;
                              const double ez = fabs(zv) + fabs(v2) * es + fabs(sv) * e2 + u * es * e2;
                              x1[i] = zv, za[i] = fabs(zv), eq[i] = ez * ez;
                            },
                            st));
      MGK_CUBLAS_TRY(ctx, gemm(BL, D, FL, x1, W3, yt));
      MGK_CUBLAS_TRY(ctx, gemm(BL, D, FL, za, W3a, ym));
      MGK_CUBLAS_TRY(ctx, gemm(BL, D, FL, eq, W3q, yv));
      const bool first = t == 0;
      MGK_CUDA_TRY(ctx, o::for_each(
                            BL * D,
                            [=] __device__(int64_t i) {
                              const double e = fabs(yt[i]) + acc_f * ym[i] + lam * sqrt(yv[i]);
                              Y[i] = (first ? 0.0 : Y[i]) + yt[i];
                              A[i] = (first ? 0.0 : A[i]) + fabs(yt[i]);
                              Q[i] = (first ? 0.0 : Q[i]) + e * e;
                            },
                            st));
    }
    MGK_CUDA_TRY(ctx, o::for_each(
                          BL * D, [=] __device__(int64_t i) { scale[i] = float((NTP - 1) * A[i] + sqrt(Q[i])); }, st));
    return 0;
  }
};

}  // namespace

MGK_REFERENCE(FsdpAndTp)
