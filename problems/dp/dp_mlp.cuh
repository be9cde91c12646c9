// Shared by the data-parallel references (dp/ddp, dp/zero1_optimizer_shard,
// dp/zero2_optimizer_shard_grad, dp/fsdp_step_e2e): the two-layer MLP's forward, MSE loss and
// backward on cuBLASLt with ParallelKernelBench's bf16 rounding points (PyTorch's bf16
// autograd), the base of the references that run it, and its bf16 Adam step. Included as
// "../dp_mlp.cuh" (the problem folder is on the include path).
//
// The model: h = X W1^T + b1, a = relu(h), o = a W2^T + b2, loss = mean((o - Y)^2) over the
// NL x DO elements of this rank's batch. Parameters are one flat bf16 vector in PyTorch's
// flatten order W1 [H, DI], b1 [H], W2 [DO, H], b2 [DO]; gradients use the same layout.
#pragma once
#include <cmath>

#include "mgk/lt_gemm.h"
#include "mgk/reference_kit.h"

namespace dp {

// The hyper-parameters of every problem here (the statements give them): a step large
// enough to move a unit weight by more than ten bf16 ulps (see the statements).
inline constexpr double kLr = 0.1, kBeta1 = 0.9, kBeta2 = 0.999, kEps = 1e-8;

struct Dims {
  int64_t NL = 0, DI = 0, H = 0, DO = 0, step = 1;
  int64_t off_b1() const { return H * DI; }
  int64_t off_W2() const { return H * DI + H; }
  int64_t off_b2() const { return H * DI + H + DO * H; }
  int64_t numel() const { return off_b2() + DO; }
  // Adam's bias corrections 1 - beta^step.
  double bc1() const { return 1.0 - std::pow(kBeta1, double(step)); }
  double bc2() const { return 1.0 - std::pow(kBeta2, double(step)); }
};

// The alignment of a bf16 element `offset` elements into a 256-byte aligned buffer: the
// flat views of b1, W2 and b2 are only as aligned as their offsets (4 bytes at `odd`).
inline unsigned align_at(int64_t offset) {
  const uint64_t bytes = uint64_t(offset) * 2;
  unsigned a = 256;
  while (a > 2 && bytes % a) a /= 2;
  return a;
}

namespace detail {
using bf16 = __nv_bfloat16;

inline int blocks(int64_t n) { return int(std::min<int64_t>((n + 255) / 256, 132 * 16)); }

// a = relu(bf16(acc + b1)): PyTorch's addmm adds the bias in fp32 and rounds once.
__global__ void bias_relu(const float* acc, const bf16* b, int64_t rows, int64_t cols, bf16* a) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < rows * cols; i += int64_t(gridDim.x) * blockDim.x) {
    const float h = __bfloat162float(__float2bfloat16(acc[i] + __bfloat162float(b[i % cols])));
    a[i] = __float2bfloat16(h > 0.0f ? h : 0.0f);
  }
}

// d = dL/do for the MSE loss as PyTorch's bf16 mse_loss_backward rounds it: o = bf16(acc + b2),
// then bf16(o - y), then bf16(that * norm), norm = 2 / (rows * cols).
__global__ void mse_grad(const float* acc, const bf16* b, const bf16* y, int64_t rows, int64_t cols, float norm,
                         bf16* d) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < rows * cols; i += int64_t(gridDim.x) * blockDim.x) {
    const float o = __bfloat162float(__float2bfloat16(acc[i] + __bfloat162float(b[i % cols])));
    const float diff = __bfloat162float(__float2bfloat16(o - __bfloat162float(y[i])));
    d[i] = __float2bfloat16(diff * norm);
  }
}

// dh = da where the activation was positive (relu's backward), in place.
__global__ void relu_mask(const bf16* a, bf16* da, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    if (!(__bfloat162float(a[i]) > 0.0f)) da[i] = __float2bfloat16(0.0f);
}

__global__ void fill_ones(bf16* x, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    x[i] = __float2bfloat16(1.0f);
}
}  // namespace detail

// Forward and backward of the MLP for one rank's batch, planned once: six cuBLASLt GEMMs
// (the bias gradients are column sums, done as a GEMM with a row of ones) and three
// elementwise kernels.
class Mlp {
 public:
  // Plans for `d`: params and grads are flat buffers allocated with cudaMalloc (or views
  // at an offset that is a multiple of 128 elements).
  int setup(mgk_ctx* ctx, const Dims& d) {
    d_dims_ = d;
    const int64_t NL = d.NL, DI = d.DI, H = d.H, DO = d.DO;
    MGK_CUDA_TRY(ctx, acc_h_.allocate(NL * H));
    MGK_CUDA_TRY(ctx, acc_o_.allocate(NL * DO));
    MGK_CUDA_TRY(ctx, a_.allocate(NL * H));
    MGK_CUDA_TRY(ctx, d_.allocate(NL * DO));
    MGK_CUDA_TRY(ctx, da_.allocate(NL * H));
    MGK_CUDA_TRY(ctx, ones_.allocate(NL));
    detail::fill_ones<<<detail::blocks(NL), 256>>>(ones_, NL);
    MGK_LAUNCH_CHECK(ctx);
    MGK_CUDA_TRY(ctx, cudaDeviceSynchronize());
    MGK_CUBLAS_TRY(ctx, lt_.create());
    const unsigned a_b1 = align_at(d.off_b1()), a_W2 = align_at(d.off_W2()), a_b2 = align_at(d.off_b2());
    using S = mgk::lt::GemmShape;
    // h = X W1^T (fp32, the bias is added with the rounding); o = a W2^T likewise.
    MGK_CUBLAS_TRY(ctx, fwd1_.plan(lt_, S{NL, H, DI, false, true, 0, 0, 0, CUDA_R_32F, 256}));
    MGK_CUBLAS_TRY(ctx, fwd2_.plan(lt_, S{NL, DO, H, false, true, 0, 0, 0, CUDA_R_32F, a_W2}));
    // dW2 = d^T a, db2 = 1^T d, da = d W2, dW1 = dh^T X, db1 = 1^T dh (bf16 outputs).
    MGK_CUBLAS_TRY(ctx, dW2_.plan(lt_, S{DO, H, NL, true, false, 0, 0, 0, CUDA_R_16BF, a_W2}));
    MGK_CUBLAS_TRY(ctx, db2_.plan(lt_, S{1, DO, NL, false, false, 0, 0, 0, CUDA_R_16BF, a_b2}));
    MGK_CUBLAS_TRY(ctx, da_gemm_.plan(lt_, S{NL, H, DO, false, false, 0, 0, 0, CUDA_R_16BF, a_W2}));
    MGK_CUBLAS_TRY(ctx, dW1_.plan(lt_, S{H, DI, NL, true, false, 0, 0, 0, CUDA_R_16BF, 256}));
    MGK_CUBLAS_TRY(ctx, db1_.plan(lt_, S{1, H, NL, false, false, 0, 0, 0, CUDA_R_16BF, a_b1}));
    return 0;
  }

  // grads (flat, bf16) = d loss / d params for this rank's batch X [NL, DI], Y [NL, DO],
  // with the flat bf16 params.
  int gradients(mgk_ctx* ctx, const void* X, const void* Y, const void* params, void* grads, cudaStream_t st) {
    using detail::bf16;
    const Dims& d = d_dims_;
    const auto* p = static_cast<const bf16*>(params);
    auto* g = static_cast<bf16*>(grads);
    bf16 *a = a_, *dd = d_, *da = da_;
    MGK_CUBLAS_TRY(ctx, fwd1_.run(X, p, acc_h_, st));
    detail::bias_relu<<<detail::blocks(d.NL * d.H), 256, 0, st>>>(acc_h_, p + d.off_b1(), d.NL, d.H, a);
    MGK_LAUNCH_CHECK(ctx);
    MGK_CUBLAS_TRY(ctx, fwd2_.run(a, p + d.off_W2(), acc_o_, st));
    detail::mse_grad<<<detail::blocks(d.NL * d.DO), 256, 0, st>>>(acc_o_, p + d.off_b2(),
                                                                   static_cast<const bf16*>(Y), d.NL, d.DO,
                                                                   float(2.0 / double(d.NL * d.DO)), dd);
    MGK_LAUNCH_CHECK(ctx);
    MGK_CUBLAS_TRY(ctx, dW2_.run(dd, a, g + d.off_W2(), st));
    MGK_CUBLAS_TRY(ctx, db2_.run(ones_, dd, g + d.off_b2(), st));
    MGK_CUBLAS_TRY(ctx, da_gemm_.run(dd, p + d.off_W2(), da, st));
    detail::relu_mask<<<detail::blocks(d.NL * d.H), 256, 0, st>>>(a, da, d.NL * d.H);
    MGK_LAUNCH_CHECK(ctx);
    MGK_CUBLAS_TRY(ctx, dW1_.run(da, X, g, st));
    MGK_CUBLAS_TRY(ctx, db1_.run(ones_, da, g + d.off_b1(), st));
    return 0;
  }

 private:
  Dims d_dims_;
  mgk::lt::Handle lt_;
  mgk::lt::Gemm fwd1_, fwd2_, dW2_, db2_, da_gemm_, dW1_, db1_;
  mgk::DeviceBuffer<float> acc_h_, acc_o_;               // h and o before the bias: [NL, H], [NL, DO]
  mgk::DeviceBuffer<__nv_bfloat16> a_, d_, da_, ones_;  // [NL, H], [NL, DO], [NL, H], [NL]
};

// The base of the references that train the MLP (dp/ddp, dp/fsdp_step_e2e and the ZeRO
// ones): its dims, read once, and its forward and backward (planned by their setup).
struct MlpReference : mgk::Reference {
  using Reference::Reference;
  const Dims d{dim("NL"), dim("DI"), dim("H"), dim("DO"), dim("STEP")};
  Mlp mlp;
};

// One whose optimizer is sharded: rank r holds the shard [lo, hi) = [r P, min((r + 1) P,
// numel)) of the flat parameters, P = ceil(numel / W) (the last shard may be shorter, or
// empty; the W P-element shards pad the flat vector to W P).
struct ShardedMlpReference : MlpReference {
  using MlpReference::MlpReference;
  const int64_t P = (d.numel() + world() - 1) / world();
  const int64_t lo = std::min(d.numel(), rank() * P), hi = std::min(d.numel(), lo + P);
};

// Where the Adam step writes: up to four segments of the flat index range, segment k holding
// flat indices [start[k], start[k+1]) at ptr[k] (start[count] is the range's end).
struct Segments {
  int count = 0;
  int64_t start[5] = {};
  __nv_bfloat16* ptr[4] = {};
  __device__ __nv_bfloat16* at(int64_t i) const {
    int k = 0;
    while (k + 1 < count && i >= start[k + 1]) ++k;
    return ptr[k] + (i - start[k]);
  }
};

// The four parameter tensors W1, b1, W2, b2 as outputs 0..3 of `out` (from output `first`).
inline Segments param_segments(const Dims& d, const mgk_tensor* out, int first) {
  Segments s;
  s.count = 4;
  const int64_t starts[5] = {0, d.off_b1(), d.off_W2(), d.off_b2(), d.numel()};
  for (int k = 0; k < 5; ++k) s.start[k] = starts[k];
  for (int k = 0; k < 4; ++k) s.ptr[k] = static_cast<__nv_bfloat16*>(out[first + k].data);
  return s;
}

// One segment: flat indices [lo, hi) at p.
inline Segments one_segment(int64_t lo, int64_t hi, void* p) {
  Segments s;
  s.count = 1;
  s.start[0] = lo;
  s.start[1] = hi;
  s.ptr[0] = static_cast<__nv_bfloat16*>(p);
  return s;
}

namespace detail {
// PyTorch's bf16 Adam from zero moments, op by op (each op rounds to bf16): g = gsum / W;
// m = (1 - b1) g; v = (1 - b2) g g; m_hat = m / bc1; v_hat = v / bc2;
// p -= lr * m_hat / (sqrt(v_hat) + eps).
__global__ void adam(const bf16* gsum, int64_t g_base, const bf16* params, int64_t p_base, int64_t lo,
                     int64_t hi, float world, float bc1, float bc2, Segments p_out, Segments m_out,
                     Segments v_out) {
  auto r = [](float x) { return __bfloat162float(__float2bfloat16(x)); };
  for (int64_t i = lo + blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < hi; i += int64_t(gridDim.x) * blockDim.x) {
    const float g = r(__bfloat162float(gsum[i - g_base]) / world);
    const float m = r(float(1.0 - kBeta1) * g), v = r(float(1.0 - kBeta2) * g * g);
    const float m_hat = r(m / bc1), v_hat = r(v / bc2);
    const float denom = r(r(sqrtf(v_hat)) + float(kEps));
    const float upd = r(r(m_hat / denom) * float(-kLr));
    *p_out.at(i) = __float2bfloat16(__bfloat162float(params[i - p_base]) + upd);
    *m_out.at(i) = __float2bfloat16(m);
    *v_out.at(i) = __float2bfloat16(v);
  }
}
}  // namespace detail

// The Adam step for flat indices [lo, hi): gradient sums at gsum[i - g_base] (divided by
// W here, as PyTorch's div_), parameters at params[i - p_base].
inline cudaError_t adam(const Dims& d, int world, const void* gsum, int64_t g_base, const void* params, int64_t p_base,
                        int64_t lo, int64_t hi, const Segments& p_out, const Segments& m_out, const Segments& v_out,
                        cudaStream_t st) {
  if (hi <= lo) return cudaSuccess;
  // PyTorch's div_ by W is a true division (a multiply by 1/W would round twice for W not
  // a power of two).
  detail::adam<<<detail::blocks(hi - lo), 256, 0, st>>>(
      static_cast<const detail::bf16*>(gsum), g_base, static_cast<const detail::bf16*>(params), p_base, lo, hi,
      float(world), float(d.bc1()), float(d.bc2()), p_out, m_out, v_out);
  return cudaGetLastError();
}

}  // namespace dp
