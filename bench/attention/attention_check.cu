// mgk-attention-check: one GPU, no arguments. Runs the cuDNN attention wrapper
// (sandbox/reference/mgk/cudnn_attention.h) at a few shapes, the attention problems' pkb shapes
// first, against plain fp32 kernels on the same bf16 inputs, and prints per shape the largest
// error of O and of the log-sum-exp stats (forward), then of dQ, dK and dV (backward, from the
// forward's O and stats and a drawn dO), with cuDNN's times beside the plain kernels'. Exit 0
// when every shape is within tolerance in both passes, 1 otherwise: one command says whether
// the wrapper works on this machine.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "mgk/cudnn_attention.h"

namespace {

#define CHECK_CUDA(expr)                                                                   \
  do {                                                                                      \
    cudaError_t e_ = (expr);                                                                \
    if (e_ != cudaSuccess) {                                                                \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #expr, cudaGetErrorString(e_)); \
      std::exit(2);                                                                         \
    }                                                                                       \
  } while (0)

struct Case {
  const char* what;
  int64_t b, h, s_q, s_kv, d;
  bool causal, bhsd;
};

// Normal-ish values (sum of 4 uniforms, variance 1), rounded to bf16: any fixed seed will do.
__global__ void fill(__nv_bfloat16* x, int64_t n, uint32_t seed) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    float sum = 0;
    for (uint32_t k = 0; k < 4; ++k) {
      uint32_t z = uint32_t(i) * 0x9e3779b9u ^ (seed + k) * 0x85ebca6bu ^ uint32_t(i >> 32);
      z ^= z >> 16, z *= 0x7feb352du, z ^= z >> 15, z *= 0x846ca68bu, z ^= z >> 16;
      sum += float(z) * (1.0f / 4294967296.0f) - 0.5f;
    }
    x[i] = __float2bfloat16_rn(sum * 1.7320508f);
  }
}

// The plain reference: one thread per query row, an online softmax over the keys in fp32.
__global__ void plain_attention(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, float* o,
                                float* lse, mgk::dnn::AttentionShape s) {
  const int64_t rows = s.b * s.h * s.s_q;
  for (int64_t r = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; r < rows; r += int64_t(gridDim.x) * blockDim.x) {
    const int64_t i = r % s.s_q, h = (r / s.s_q) % s.h, b = r / (s.s_q * s.h);
    const __nv_bfloat16* qi = q + b * s.q[0] + h * s.q[1] + i * s.q[2];
    float acc[128];
    for (int64_t c = 0; c < s.d; ++c) acc[c] = 0;
    float m = -INFINITY, z = 0;
    const int64_t last = s.causal ? (i < s.s_kv - 1 ? i : s.s_kv - 1) : s.s_kv - 1;
    for (int64_t j = 0; j <= last; ++j) {
      const __nv_bfloat16* kj = k + b * s.k[0] + h * s.k[1] + j * s.k[2];
      const __nv_bfloat16* vj = v + b * s.v[0] + h * s.v[1] + j * s.v[2];
      float dot = 0;
      for (int64_t c = 0; c < s.d; ++c) dot += __bfloat162float(qi[c]) * __bfloat162float(kj[c]);
      const float x = dot * s.scale, m2 = fmaxf(m, x), shrink = expf(m - m2), p = expf(x - m2);
      for (int64_t c = 0; c < s.d; ++c) acc[c] = acc[c] * shrink + p * __bfloat162float(vj[c]);
      z = z * shrink + p;
      m = m2;
    }
    float* oi = o + ((b * s.h + h) * s.s_q + i) * s.d;  // packed BHSD
    for (int64_t c = 0; c < s.d; ++c) oi[c] = acc[c] / z;
    lse[r] = m + logf(z);
  }
}

// The plain backward, from the same O and stats cuDNN gets. Query rows: one thread per row
// (b, h, i), D_i = rowsum(dO * O) (kept in row_dot for the key rows), then over the keys
// P = exp(scale q.k_j - lse_i), dS = P (dO.v_j - D_i), dQ = scale sum dS k_j; packed BHSD.
__global__ void plain_backward_q(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v,
                                 const __nv_bfloat16* o, const __nv_bfloat16* d_o, const float* lse, float* dq,
                                 float* row_dot, mgk::dnn::AttentionShape s) {
  const int64_t rows = s.b * s.h * s.s_q;
  for (int64_t r = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; r < rows; r += int64_t(gridDim.x) * blockDim.x) {
    const int64_t i = r % s.s_q, h = (r / s.s_q) % s.h, b = r / (s.s_q * s.h);
    const int64_t at = b * s.q[0] + h * s.q[1] + i * s.q[2], ot = b * s.o[0] + h * s.o[1] + i * s.o[2];
    float acc[128], dot = 0;
    for (int64_t c = 0; c < s.d; ++c) {
      acc[c] = 0;
      dot += __bfloat162float(d_o[ot + c]) * __bfloat162float(o[ot + c]);
    }
    row_dot[r] = dot;
    const int64_t last = s.causal ? (i < s.s_kv - 1 ? i : s.s_kv - 1) : s.s_kv - 1;
    for (int64_t j = 0; j <= last; ++j) {
      const __nv_bfloat16* kj = k + b * s.k[0] + h * s.k[1] + j * s.k[2];
      const __nv_bfloat16* vj = v + b * s.v[0] + h * s.v[1] + j * s.v[2];
      float qk = 0, dp = 0;
      for (int64_t c = 0; c < s.d; ++c) {
        qk += __bfloat162float(q[at + c]) * __bfloat162float(kj[c]);
        dp += __bfloat162float(d_o[ot + c]) * __bfloat162float(vj[c]);
      }
      const float ds = expf(qk * s.scale - lse[r]) * (dp - dot);
      for (int64_t c = 0; c < s.d; ++c) acc[c] += ds * __bfloat162float(kj[c]);
    }
    for (int64_t c = 0; c < s.d; ++c) dq[r * s.d + c] = acc[c] * s.scale;
  }
}

// Key rows: one thread per row (b, h, j), over the queries that see key j:
// dK = scale sum dS_ij q_i, dV = sum P_ij dO_i; packed BHSD ([B, H, S_kv, D]).
__global__ void plain_backward_kv(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v,
                                  const __nv_bfloat16* d_o, const float* lse, const float* row_dot, float* dk,
                                  float* dv, mgk::dnn::AttentionShape s) {
  const int64_t rows = s.b * s.h * s.s_kv;
  for (int64_t r = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; r < rows; r += int64_t(gridDim.x) * blockDim.x) {
    const int64_t j = r % s.s_kv, h = (r / s.s_kv) % s.h, b = r / (s.s_kv * s.h);
    const __nv_bfloat16* kj = k + b * s.k[0] + h * s.k[1] + j * s.k[2];
    const __nv_bfloat16* vj = v + b * s.v[0] + h * s.v[1] + j * s.v[2];
    float ak[128], av[128];
    for (int64_t c = 0; c < s.d; ++c) ak[c] = av[c] = 0;
    for (int64_t i = s.causal ? j : 0; i < s.s_q; ++i) {
      const int64_t qr = (b * s.h + h) * s.s_q + i;
      const __nv_bfloat16* qi = q + b * s.q[0] + h * s.q[1] + i * s.q[2];
      const __nv_bfloat16* gi = d_o + b * s.o[0] + h * s.o[1] + i * s.o[2];
      float qk = 0, dp = 0;
      for (int64_t c = 0; c < s.d; ++c) {
        qk += __bfloat162float(qi[c]) * __bfloat162float(kj[c]);
        dp += __bfloat162float(gi[c]) * __bfloat162float(vj[c]);
      }
      const float p = expf(qk * s.scale - lse[qr]), ds = p * (dp - row_dot[qr]);
      for (int64_t c = 0; c < s.d; ++c) {
        ak[c] += ds * __bfloat162float(qi[c]);
        av[c] += p * __bfloat162float(gi[c]);
      }
    }
    for (int64_t c = 0; c < s.d; ++c) dk[r * s.d + c] = ak[c] * s.scale, dv[r * s.d + c] = av[c];
  }
}

template <class F>
float time_us(F f, int reps) {
  cudaEvent_t a, b;
  CHECK_CUDA(cudaEventCreate(&a));
  CHECK_CUDA(cudaEventCreate(&b));
  f();  // warm-up
  CHECK_CUDA(cudaEventRecord(a));
  for (int i = 0; i < reps; ++i) f();
  CHECK_CUDA(cudaEventRecord(b));
  CHECK_CUDA(cudaEventSynchronize(b));
  float ms = 0;
  CHECK_CUDA(cudaEventElapsedTime(&ms, a, b));
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return ms * 1000.0f / float(reps);
}

// The backward at one shape, from the forward's O and stats and a drawn dO (O's layout):
// cuDNN's dQ, dK, dV (bf16) against the plain fp32 kernels'. Each gradient is a sum of
// products whose scores and dS enter cuDNN's matmuls in bf16, so the test allows 2 % of the
// value plus 1 % of the tensor's largest magnitude; a wrong graph (a missing term, a
// transposed operand, an accumulator read in the wrong order) is off by the value itself.
bool check_backward(const Case& c, const mgk::dnn::AttentionShape& s, cudnnHandle_t dnn, const __nv_bfloat16* q,
                    const __nv_bfloat16* k, const __nv_bfloat16* v, const __nv_bfloat16* o, const float* stats) {
  const int64_t nq = c.b * c.h * c.s_q * c.d, nkv = c.b * c.h * c.s_kv * c.d, rows = c.b * c.h * c.s_q;
  __nv_bfloat16 *d_o, *dq, *dk, *dv;
  float *ref_dq, *ref_dk, *ref_dv, *row_dot;
  CHECK_CUDA(cudaMalloc(&d_o, nq * 2));
  CHECK_CUDA(cudaMalloc(&dq, nq * 2));
  CHECK_CUDA(cudaMalloc(&dk, nkv * 2));
  CHECK_CUDA(cudaMalloc(&dv, nkv * 2));
  CHECK_CUDA(cudaMalloc(&ref_dq, nq * 4));
  CHECK_CUDA(cudaMalloc(&ref_dk, nkv * 4));
  CHECK_CUDA(cudaMalloc(&ref_dv, nkv * 4));
  CHECK_CUDA(cudaMalloc(&row_dot, rows * 4));
  fill<<<1024, 256>>>(d_o, nq, 4);
  CHECK_CUDA(cudaGetLastError());
  mgk::dnn::AttentionBackward bwd;
  char msg[640];
  cudnnStatus_t st = bwd.plan(dnn, s);
  bool ok = st == CUDNN_STATUS_SUCCESS;
  if (ok) ok = (st = bwd.run(dnn, q, k, v, o, d_o, stats, dq, dk, dv, nullptr)) == CUDNN_STATUS_SUCCESS;
  if (!ok) {
    mgk::dnn::describe(st, msg, sizeof(msg));
    std::printf("%-34s FAIL  backward cuDNN: %s\n", c.what, msg);
  } else {
    const int grid_q = int(std::min<int64_t>((rows + 127) / 128, 4096));
    const int grid_kv = int(std::min<int64_t>((c.b * c.h * c.s_kv + 127) / 128, 4096));
    auto plain = [&] {
      plain_backward_q<<<grid_q, 128>>>(q, k, v, o, d_o, stats, ref_dq, row_dot, s);
      plain_backward_kv<<<grid_kv, 128>>>(q, k, v, d_o, stats, row_dot, ref_dk, ref_dv, s);
    };
    plain();
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());
    // got: [B, H|S, ...] in Q's / K's layout; want: packed BHSD. A gradient that is exactly
    // zero (one key per query: the softmax is constant, so dQ = dK = 0) has no peak of its
    // own; cuDNN's is then the fp32 rounding of dP - D (the two sums in another order), and
    // the floor is 1 % of `zero_peak`, dV's (dO's scale), where a wrong graph is off by O(1).
    auto compare = [&](const __nv_bfloat16* got_d, const float* want_d, int64_t n, int64_t seq,
                       const mgk::dnn::Strides& at, double zero_peak, double* err_rel, double* peak_out) {
      std::vector<__nv_bfloat16> got(n);
      std::vector<float> want(n);
      CHECK_CUDA(cudaMemcpy(got.data(), got_d, n * 2, cudaMemcpyDeviceToHost));
      CHECK_CUDA(cudaMemcpy(want.data(), want_d, n * 4, cudaMemcpyDeviceToHost));
      double peak = 0, err = 0;
      for (float w : want) peak = std::fmax(peak, std::fabs(w));
      if (peak_out) *peak_out = peak;
      if (peak == 0) peak = zero_peak;
      bool within = true;
      for (int64_t e = 0; e < n; ++e) {
        const int64_t col = e % c.d, i = (e / c.d) % seq, h = (e / (c.d * seq)) % c.h, b = e / (c.d * seq * c.h);
        const double g = __bfloat162float(got[b * at[0] + h * at[1] + i * at[2] + col]), w = want[e];
        const double d = std::fabs(g - w);
        err = std::fmax(err, d);
        if (!(d <= 2e-2 * std::fabs(w) + 1e-2 * peak)) within = false;
      }
      *err_rel = peak > 0 ? err / peak : err;
      return within;
    };
    double e_dq = 0, e_dk = 0, e_dv = 0, peak_dv = 0;
    bool within = compare(dv, ref_dv, nkv, c.s_kv, s.v, 0, &e_dv, &peak_dv);
    within = compare(dq, ref_dq, nq, c.s_q, s.q, peak_dv, &e_dq, nullptr) && within;
    within = compare(dk, ref_dk, nkv, c.s_kv, s.k, peak_dv, &e_dk, nullptr) && within;
    const float us_dnn = time_us([&] { bwd.run(dnn, q, k, v, o, d_o, stats, dq, dk, dv, nullptr); }, 50);
    const float us_plain = time_us(plain, 3);
    const double flops = 10.0 * c.b * c.h * c.s_q * c.s_kv * c.d * (c.causal ? 0.5 : 1.0);
    std::printf("%-34s %s  backward max|d| / max|ref|: dQ %.2e dK %.2e dV %.2e  cuDNN %9.1f us (%6.1f TFLOP/s, ws %lld B)"
                "  plain fp32 %10.1f us\n",
                c.what, within ? "ok  " : "FAIL", e_dq, e_dk, e_dv, us_dnn, flops / us_dnn * 1e-6,
                (long long)bwd.workspace_bytes(), us_plain);
    ok = within;
  }
  for (void* p : {(void*)d_o, (void*)dq, (void*)dk, (void*)dv, (void*)ref_dq, (void*)ref_dk, (void*)ref_dv,
                  (void*)row_dot})
    cudaFree(p);
  return ok;
}

bool check(const Case& c, cudnnHandle_t dnn) {
  mgk::dnn::AttentionShape s;
  s.b = c.b, s.h = c.h, s.s_q = c.s_q, s.s_kv = c.s_kv, s.d = c.d, s.causal = c.causal;
  s.scale = 1.0f / std::sqrt(float(c.d));
  s.q = s.o = c.bhsd ? mgk::dnn::bhsd(c.h, c.s_q, c.d) : mgk::dnn::bshd(c.h, c.s_q, c.d);
  s.k = s.v = c.bhsd ? mgk::dnn::bhsd(c.h, c.s_kv, c.d) : mgk::dnn::bshd(c.h, c.s_kv, c.d);
  const int64_t nq = c.b * c.h * c.s_q * c.d, nkv = c.b * c.h * c.s_kv * c.d, rows = c.b * c.h * c.s_q;
  __nv_bfloat16 *q, *k, *v, *o;
  float *stats, *ref_o, *ref_lse;
  CHECK_CUDA(cudaMalloc(&q, nq * 2));
  CHECK_CUDA(cudaMalloc(&o, nq * 2));
  CHECK_CUDA(cudaMalloc(&k, nkv * 2));
  CHECK_CUDA(cudaMalloc(&v, nkv * 2));
  CHECK_CUDA(cudaMalloc(&stats, rows * 4));
  CHECK_CUDA(cudaMalloc(&ref_o, nq * 4));
  CHECK_CUDA(cudaMalloc(&ref_lse, rows * 4));
  fill<<<1024, 256>>>(q, nq, 1);
  fill<<<1024, 256>>>(k, nkv, 2);
  fill<<<1024, 256>>>(v, nkv, 3);
  CHECK_CUDA(cudaGetLastError());

  mgk::dnn::Attention attn;
  char msg[640];
  cudnnStatus_t st = attn.plan(dnn, s);
  bool ok = st == CUDNN_STATUS_SUCCESS;
  if (ok) ok = (st = attn.run(dnn, q, k, v, o, stats, nullptr)) == CUDNN_STATUS_SUCCESS;
  if (!ok) {
    mgk::dnn::describe(st, msg, sizeof(msg));
    std::printf("%-34s FAIL  cuDNN: %s\n", c.what, msg);
  } else {
    const int grid = int(std::min<int64_t>((rows + 127) / 128, 4096));
    plain_attention<<<grid, 128>>>(q, k, v, ref_o, ref_lse, s);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());
    std::vector<__nv_bfloat16> got(nq);
    std::vector<float> want(nq), lse(rows), want_lse(rows);
    CHECK_CUDA(cudaMemcpy(got.data(), o, nq * 2, cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(want.data(), ref_o, nq * 4, cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(lse.data(), stats, rows * 4, cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(want_lse.data(), ref_lse, rows * 4, cudaMemcpyDeviceToHost));
    // O: bf16 output of fp32 math, both sides; allow a few bf16 ulps of the value plus an
    // absolute floor for values near zero (the probabilities enter P.V as bf16).
    double err_o = 0, err_lse = 0;
    bool within = true;
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t i = r % c.s_q, h = (r / c.s_q) % c.h, b = r / (c.s_q * c.h);
      for (int64_t col = 0; col < c.d; ++col) {
        const double g = __bfloat162float(got[b * s.o[0] + h * s.o[1] + i * s.o[2] + col]);
        const double w = want[r * c.d + col], e = std::fabs(g - w);
        err_o = std::fmax(err_o, e);
        if (!(e <= 2e-2 + 2e-2 * std::fabs(w))) within = false;
      }
      const double e = std::fabs(double(lse[r]) - want_lse[r]);
      err_lse = std::fmax(err_lse, e);
      if (!(e <= 1e-3 + 1e-4 * std::fabs(want_lse[r]))) within = false;
    }
    const float us_dnn = time_us([&] { attn.run(dnn, q, k, v, o, stats, nullptr); }, 50);
    const float us_plain = time_us([&] { plain_attention<<<grid, 128>>>(q, k, v, ref_o, ref_lse, s); }, 3);
    const double flops = 4.0 * c.b * c.h * c.s_q * c.s_kv * c.d * (c.causal ? 0.5 : 1.0);
    std::printf("%-34s %s  max|dO| %.2e  max|dLSE| %.2e  cuDNN %9.1f us (%6.1f TFLOP/s, ws %lld B)  plain fp32 %10.1f us\n",
                c.what, within ? "ok  " : "FAIL", err_o, err_lse, us_dnn, flops / us_dnn * 1e-6,
                (long long)attn.workspace_bytes(), us_plain);
    ok = check_backward(c, s, dnn, q, k, v, o, stats) && within;
  }
  cudaFree(q), cudaFree(k), cudaFree(v), cudaFree(o), cudaFree(stats), cudaFree(ref_o), cudaFree(ref_lse);
  return ok;
}

}  // namespace

int main() {
  int dev = 0;
  cudaDeviceProp prop;
  CHECK_CUDA(cudaGetDevice(&dev));
  CHECK_CUDA(cudaGetDeviceProperties(&prop, dev));
  std::printf("mgk-attention-check on %s (sm_%d%d), cuDNN %zu\n", prop.name, prop.major, prop.minor,
              cudnnGetVersion());
  mgk::dnn::Handle dnn;
  if (dnn.create() != CUDNN_STATUS_SUCCESS) {
    std::printf("cuDNN did not start\n");
    return 2;
  }
  // The pkb shapes: ring attention (54) B 16, H 8, D 64, per-rank S = 16 / W, causal on the
  // diagonal block and not on the others; the whole T = 16 sequence at W = 1. Every shape
  // checks the backward too.
  const Case cases[] = {
      {"pkb ring W=1 causal 16x16", 16, 8, 16, 16, 64, true, false},
      {"pkb ring W=2 diag causal 8x8", 16, 8, 8, 8, 64, true, false},
      {"pkb ring W=2 off-diag 8x8", 16, 8, 8, 8, 64, false, false},
      {"pkb ring W=8 off-diag 2x2", 16, 8, 2, 2, 64, false, false},
      {"pkb ring W=16 diag causal 1x1", 16, 8, 1, 1, 64, true, false},
      {"ulysses per-token heads 4x4", 16 * 16, 1, 4, 4, 64, false, false},
      // ring_attention_backward_dp (57): unmasked S x S blocks, S = 16 / CP at pkb, odd S at odd.
      {"pkb ring-bwd CP=1 16x16", 16, 8, 16, 16, 64, false, false},
      {"pkb ring-bwd CP=4 4x4", 16, 8, 4, 4, 64, false, false},
      {"odd ring-bwd CP=2 77x77", 3, 5, 77, 77, 64, false, false},
      {"large ring-bwd CP=2 4096 d128", 1, 8, 4096, 4096, 128, false, false},
      {"medium causal 2x1024 BSHD", 8, 8, 1024, 1024, 64, true, false},
      {"medium causal 2x1024 BHSD", 8, 8, 1024, 1024, 64, true, true},
      {"large causal 4096 d128", 2, 16, 4096, 4096, 128, true, false},
      {"large non-causal 4096 d64", 2, 16, 4096, 4096, 64, false, false},
      {"odd 1000 x 1000", 2, 8, 1000, 1000, 64, true, false},
      {"odd 250 q x 1000 kv", 2, 8, 250, 1000, 64, false, false},
  };
  int failed = 0;
  for (const Case& c : cases) failed += check(c, dnn) ? 0 : 1;
  std::printf("%s: %d of %zu shapes failed\n", failed ? "FAIL" : "ok", failed, sizeof(cases) / sizeof(cases[0]));
  return failed ? 1 : 0;
}
