// Shared by the plain candidates of the data-parallel problems (tests/gpu/candidates/dp/):
// the two-layer MLP's gradient on one rank's batch (cuBLAS GEMMs, fp32 outputs, operands
// rounded to bf16 only where a GEMM needs bf16 inputs), Adam from zero moments in fp32, and
// the pulls from peers that stand for the communication. Layout and hyper-parameters as in
// the problems' statements: flat params W1 [H, DI], b1 [H], W2 [DO, H], b2 [DO].
#pragma once
#include <cmath>

#include "plain_compute.cuh"

namespace plain_mlp {

constexpr double kLr = 0.1, kBeta1 = 0.9, kBeta2 = 0.999, kEps = 1e-8;

struct Dims {
  int64_t NL, DI, H, DO, step;
  int64_t off_b1() const { return H * DI; }
  int64_t off_W2() const { return H * DI + H; }
  int64_t off_b2() const { return H * DI + H + DO * H; }
  int64_t numel() const { return off_b2() + DO; }
  float bc1() const { return float(1.0 - std::pow(kBeta1, double(step))); }
  float bc2() const { return float(1.0 - std::pow(kBeta2, double(step))); }
  int64_t shard(int world) const { return (numel() + world - 1) / world; }
};

inline Dims dims(mgk_ctx* ctx) {
  return {mgk::dim(ctx, "NL"), mgk::dim(ctx, "DI"), mgk::dim(ctx, "H"), mgk::dim(ctx, "DO"), mgk::dim(ctx, "STEP")};
}

// Private workspace (plain::State::local, in this order) for gradient().
inline std::vector<size_t> local_bytes(const Dims& d) {
  const size_t nh = size_t(d.NL * d.H), no = size_t(d.NL * d.DO);
  return {size_t(d.numel()) * 2, nh * 4, nh * 2, no * 4, no * 2, nh * 4, nh * 2};
}

__global__ void bias_relu(const float* h, const __nv_bfloat16* p, int64_t b_off, int64_t rows, int64_t cols,
                          __nv_bfloat16* a) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < rows * cols; i += int64_t(gridDim.x) * blockDim.x) {
    const float v = h[i] + __bfloat162float(p[b_off + i % cols]);
    a[i] = __float2bfloat16(v > 0.0f ? v : 0.0f);
  }
}

// d = 2 (o + b2 - y) / (rows cols), the MSE loss's gradient.
__global__ void mse_grad(const float* o, const __nv_bfloat16* p, int64_t b_off, const __nv_bfloat16* y, int64_t rows,
                         int64_t cols, __nv_bfloat16* d) {
  const float norm = float(2.0 / double(rows * cols));
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < rows * cols; i += int64_t(gridDim.x) * blockDim.x)
    d[i] = __float2bfloat16(norm * (o[i] + __bfloat162float(p[b_off + i % cols]) - __bfloat162float(y[i])));
}

__global__ void relu_mask(const float* da, const __nv_bfloat16* a, __nv_bfloat16* dh, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    dh[i] = __float2bfloat16(__bfloat162float(a[i]) > 0.0f ? da[i] : 0.0f);
}

// out[c] = sum over rows of m[r, c] (bf16 matrix, fp32 sums): a bias gradient.
__global__ void column_sums(const __nv_bfloat16* m, int64_t rows, int64_t cols, float* out) {
  for (int64_t c = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; c < cols; c += int64_t(gridDim.x) * blockDim.x) {
    float s = 0;
    for (int64_t r = 0; r < rows; ++r) s += __bfloat162float(m[r * cols + c]);
    out[c] = s;
  }
}

// grads (fp32, flat) = d loss / d params for this rank's X, Y at the flat bf16 params in
// local[0] (which the caller filled).
inline int gradient(mgk_ctx* ctx, const Dims& d, const void* X, const void* Y, float* grads, cudaStream_t s) {
  auto& l = plain::state(ctx).local;
  const auto* p = static_cast<const __nv_bfloat16*>(l[0]);
  auto* h = static_cast<float*>(l[1]);
  auto* a = static_cast<__nv_bfloat16*>(l[2]);
  auto* o = static_cast<float*>(l[3]);
  auto* dd = static_cast<__nv_bfloat16*>(l[4]);
  auto* da = static_cast<float*>(l[5]);
  auto* dh = static_cast<__nv_bfloat16*>(l[6]);
  const int64_t NL = d.NL, DI = d.DI, H = d.H, DO = d.DO;
  MGK_CUBLAS_TRY(ctx, plain::gemm(ctx, s, false, true, NL, H, DI, X, DI, p, DI, h, H, CUDA_R_32F));
  bias_relu<<<plain::blocks_for(NL * H), 256, 0, s>>>(h, p, d.off_b1(), NL, H, a);
  MGK_LAUNCH_CHECK(ctx);
  MGK_CUBLAS_TRY(ctx, plain::gemm(ctx, s, false, true, NL, DO, H, a, H, p + d.off_W2(), H, o, DO, CUDA_R_32F));
  mse_grad<<<plain::blocks_for(NL * DO), 256, 0, s>>>(o, p, d.off_b2(), static_cast<const __nv_bfloat16*>(Y), NL, DO, dd);
  MGK_LAUNCH_CHECK(ctx);
  MGK_CUBLAS_TRY(ctx, plain::gemm(ctx, s, true, false, DO, H, NL, dd, DO, a, H, grads + d.off_W2(), H, CUDA_R_32F));
  column_sums<<<plain::blocks_for(DO), 256, 0, s>>>(dd, NL, DO, grads + d.off_b2());
  MGK_LAUNCH_CHECK(ctx);
  MGK_CUBLAS_TRY(ctx, plain::gemm(ctx, s, false, false, NL, H, DO, dd, DO, p + d.off_W2(), H, da, H, CUDA_R_32F));
  relu_mask<<<plain::blocks_for(NL * H), 256, 0, s>>>(da, a, dh, NL * H);
  MGK_LAUNCH_CHECK(ctx);
  MGK_CUBLAS_TRY(ctx, plain::gemm(ctx, s, true, false, H, DI, NL, dh, H, X, DI, grads, DI, CUDA_R_32F));
  column_sums<<<plain::blocks_for(H), 256, 0, s>>>(dh, NL, H, grads + d.off_b1());
  MGK_LAUNCH_CHECK(ctx);
  return 0;
}

// local[0] = the flat params of rank `src` from the symmetric inputs W1, b1, W2, b2
// (in[first .. first + 3]).
inline int load_params(mgk_ctx* ctx, const Dims& d, const mgk_tensor* in, int first, int src, cudaStream_t s) {
  auto* flat = static_cast<char*>(plain::state(ctx).local[0]);
  const int64_t offs[4] = {0, d.off_b1(), d.off_W2(), d.off_b2()};
  for (int k = 0; k < 4; ++k)
    MGK_CUDA_TRY(ctx, simple::copy(in[first + k].host_peers[src], flat + offs[k] * 2, mgk::nbytes(in[first + k]), s));
  return 0;
}

// Where flat index i of the parameters lives among W1, b1, W2, b2 (outputs first .. first + 3).
struct Params {
  int64_t start[5];
  __nv_bfloat16* ptr[4];
  __device__ __nv_bfloat16* at(int64_t i) const {
    int k = 0;
    while (k < 3 && i >= start[k + 1]) ++k;
    return ptr[k] + (i - start[k]);
  }
};
inline Params params_of(const Dims& d, const mgk_tensor* out, int first) {
  Params p{{0, d.off_b1(), d.off_W2(), d.off_b2(), d.numel()}, {}};
  for (int k = 0; k < 4; ++k) p.ptr[k] = static_cast<__nv_bfloat16*>(out[first + k].data);
  return p;
}

// Adam from zero moments on flat indices [lo, hi): the mean gradient pulled from every used
// rank's fp32 gradients (grad_peers), fp32 throughout. p' goes to p_out(i) (Params) or to
// p_shard[i - lo]; m and v to m_out(i)/v_out(i) (Params, ddp) or m_shard/v_shard[i - lo].
__global__ void adam(void* const* grad_peers, int first, int end, int world, const __nv_bfloat16* params, int64_t lo,
                     int64_t hi, float bc1, float bc2, bool full, Params p_out, Params m_out, Params v_out,
                     __nv_bfloat16* p_shard, __nv_bfloat16* m_shard, __nv_bfloat16* v_shard) {
  for (int64_t i = lo + blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < hi; i += int64_t(gridDim.x) * blockDim.x) {
    float sum = 0;
    for (int r = first; r < end; ++r) sum += static_cast<const float*>(grad_peers[r])[i];
    const float g = sum / float(world);
    const float m = float(1.0 - kBeta1) * g, v = float(1.0 - kBeta2) * g * g;
    const float p = __bfloat162float(params[i]) - float(kLr) * (m / bc1) / (sqrtf(v / bc2) + float(kEps));
    *(full ? p_out.at(i) : p_shard + (i - lo)) = __float2bfloat16(p);
    *(full ? m_out.at(i) : m_shard + (i - lo)) = __float2bfloat16(m);
    *(full ? v_out.at(i) : v_shard + (i - lo)) = __float2bfloat16(v);
  }
}

// ZeRO (dp/zero1_optimizer_shard, dp/zero2_optimizer_shard_grad; the all-reduce and the
// reduce-scatter are the same pull here): symmetric workspace sym[0] fp32 grads [numel],
// sym[1] the updated shard bf16 [P].
inline int zero_setup(mgk_ctx* ctx) {
  const Dims d = dims(ctx);
  return plain::setup(ctx, {size_t(d.numel()) * 4, size_t(d.shard(ctx->world_size)) * 2}, local_bytes(d));
}

__global__ void gather_shards(void* const* shard_peers, int first, int end, int64_t P, Params out, int64_t numel) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < numel; i += int64_t(gridDim.x) * blockDim.x) {
    const int r = int(i / P);
    *out.at(i) = r >= first && r < end ? static_cast<const __nv_bfloat16*>(shard_peers[r])[i % P] : __float2bfloat16(0.0f);
  }
}

inline int zero_run(mgk_ctx* ctx, const mgk_tensor* in, const mgk_tensor* out, cudaStream_t s) {
  const Dims d = dims(ctx);
  auto& st = plain::state(ctx);
  const int64_t P = d.shard(ctx->world_size), lo = std::min(d.numel(), ctx->rank * P), hi = std::min(d.numel(), lo + P);
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every rank's inputs are in place, last call's pulls done
  if (int e = load_params(ctx, d, in, 2, plain::first_source(ctx), s)) return e;
  if (int e = gradient(ctx, d, in[0].data, in[1].data, static_cast<float*>(st.sym[0].local), s)) return e;
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every rank's gradient is complete
  const Params none{};
  if (hi > lo) {
    adam<<<plain::blocks_for(hi - lo), 256, 0, s>>>(
        st.sym[0].peers, plain::first_source(ctx), plain::end_source(ctx), ctx->world_size,
        static_cast<const __nv_bfloat16*>(st.local[0]), lo, hi, d.bc1(), d.bc2(), false, none, none, none,
        static_cast<__nv_bfloat16*>(st.sym[1].local), static_cast<__nv_bfloat16*>(out[4].data),
        static_cast<__nv_bfloat16*>(out[5].data));
    MGK_LAUNCH_CHECK(ctx);
  }
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every shard is updated
  gather_shards<<<plain::blocks_for(d.numel()), 256, 0, s>>>(st.sym[1].peers, plain::first_source(ctx),
                                                             plain::end_source(ctx), P, params_of(d, out, 0), d.numel());
  MGK_LAUNCH_CHECK(ctx);
  return 0;
}

}  // namespace plain_mlp
