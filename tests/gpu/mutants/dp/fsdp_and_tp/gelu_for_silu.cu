// Mutant of tests/gpu/candidates/dp/fsdp_and_tp.cu. Class: wrong elementwise function (activation).
// The gated MLP uses GELU (tanh form) of x W1 instead of SiLU: the other common activation, written from memory.
//
// The plain candidate's description:
// Plain: after a barrier, this rank's TP column block of W1 and W2 and row block of W3
// pulled from the FSDP group's symmetric shards (the all-gathers; zeros for the ranks not
// used under MGK_LOCAL_ONLY), x W1 and x W2 in fp32 on cuBLAS, z = silu(x W1) (x W2) rounded
// to bf16 for the last GEMM, this rank's partial z W3 in fp32 into symmetric memory, a
// barrier, then the sum of the TP group's partials pulled from the peers (the all-reduce).
#include <cmath>

#include "../../../candidates/plain_compute.cuh"

namespace {

struct Dims {
  int64_t NTP, NF, BL, DS, D, FL;
};

Dims dims(mgk_ctx* ctx) {
  return {mgk::dim(ctx, "NTP"), mgk::dim(ctx, "NF"), mgk::dim(ctx, "BL"),
          mgk::dim(ctx, "DS"),  mgk::dim(ctx, "D"),  mgk::dim(ctx, "FL")};
}

__global__ void silu_mul(const float* x1, const float* x2, __nv_bfloat16* z, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    z[i] = __float2bfloat16(0.5f * x1[i] * (1.0f + tanhf(0.7978845608f * (x1[i] + 0.044715f * x1[i] * x1[i] * x1[i]))) * x2[i]);
}

// y[i] = sum over the used ranks q in [first, end) of partial_q[i] (fp32), rounded once.
__global__ void tp_sum(void* const* partial_peers, int first, int end, __nv_bfloat16* y, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    float acc = 0;
    for (int q = first; q < end; ++q) acc += static_cast<const float*>(partial_peers[q])[i];
    y[i] = __float2bfloat16(acc);
  }
}

}  // namespace

// Symmetric: the fp32 partial [BL, D]. Private: W1, W2 [D, FL], W3 [FL, D] (bf16), x1, x2
// [BL, FL] (fp32), z [BL, FL] (bf16).
MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  const Dims d = dims(ctx);
  const size_t w = size_t(d.D * d.FL) * 2, act = size_t(d.BL * d.FL);
  return plain::setup(ctx, {size_t(d.BL * d.D) * 4}, {w, w, w, act * 4, act * 4, act * 2});
}
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { plain::teardown(ctx); }

// in: x, W1_shard, W2_shard, W3_shard (symmetric). out: y.
MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  const Dims d = dims(ctx);
  auto& st = plain::state(ctx);
  const int f = int(ctx->rank / d.NTP), t = int(ctx->rank % d.NTP);
  auto* w1 = static_cast<__nv_bfloat16*>(st.local[0]);
  auto* w2 = static_cast<__nv_bfloat16*>(st.local[1]);
  auto* w3 = static_cast<__nv_bfloat16*>(st.local[2]);
  auto* x1 = static_cast<float*>(st.local[3]);
  auto* x2 = static_cast<float*>(st.local[4]);
  auto* z = static_cast<__nv_bfloat16*>(st.local[5]);
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every rank's inputs are in place, last call's pulls done
  for (int g = 0; g < d.NF; ++g) {  // the FSDP group of TP index t: ranks g NTP + t
    const int q = int(g * d.NTP + t);
    MGK_CUDA_TRY(ctx, plain::copy_from(ctx, q, in[1].host_peers[q], d.FL, w1 + g * d.DS * d.FL, d.FL, d.DS, d.FL, s));
    MGK_CUDA_TRY(ctx, plain::copy_from(ctx, q, in[2].host_peers[q], d.FL, w2 + g * d.DS * d.FL, d.FL, d.DS, d.FL, s));
    MGK_CUDA_TRY(ctx, plain::copy_from(ctx, q, in[3].host_peers[q], d.DS, w3 + g * d.DS, d.D, d.FL, d.DS, s));
  }
  MGK_CUBLAS_TRY(ctx, plain::gemm(ctx, s, false, false, d.BL, d.FL, d.D, in[0].data, d.D, w1, d.FL, x1, d.FL, CUDA_R_32F));
  MGK_CUBLAS_TRY(ctx, plain::gemm(ctx, s, false, false, d.BL, d.FL, d.D, in[0].data, d.D, w2, d.FL, x2, d.FL, CUDA_R_32F));
  silu_mul<<<plain::blocks_for(d.BL * d.FL), 256, 0, s>>>(x1, x2, z, d.BL * d.FL);
  MGK_LAUNCH_CHECK(ctx);
  MGK_CUBLAS_TRY(ctx, plain::gemm(ctx, s, false, false, d.BL, d.D, d.FL, z, d.FL, w3, d.D, st.sym[0].local, d.D,
                                  CUDA_R_32F));
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every rank's partial is complete
  const int first = std::max(int(f * d.NTP), plain::first_source(ctx));
  const int end = std::min(int(f * d.NTP + d.NTP), plain::end_source(ctx));
  tp_sum<<<plain::blocks_for(d.BL * d.D), 256, 0, s>>>(st.sym[0].peers, first, end,
                                                       static_cast<__nv_bfloat16*>(out[0].data), d.BL * d.D);
  MGK_LAUNCH_CHECK(ctx);
  return 0;
}
