// Mutant of tests/gpu/candidates/dp/fsdp_step_e2e.cu. Class: local instead of global normalisation (the mean over ranks).
// The ranks' gradients are summed and not divided by W: the reduce-scatter's sum taken for FSDP's average.
//
// The plain candidate's description:
// Plain (plain_mlp.cuh's gradient): after a barrier, every rank's parameter shard pulled
// from its symmetric input into the flat parameters (the all-gather; zeros for the ranks not
// used under MGK_LOCAL_ONLY), this rank's gradient in fp32 on cuBLAS into symmetric memory,
// a barrier, then AdamW in fp32 on this rank's shard of the mean gradient pulled from every
// peer (the reduce-scatter).
#include "../../../candidates/plain_mlp.cuh"

namespace {

constexpr double kWd = 0.5;

// The flat params' shard [lo, lo + n): g = mean over the used ranks' fp32 gradients, then
// m = b1 m0 + (1 - b1) g, v = b2 v0 + (1 - b2) g^2, p = p0 - lr (m / bc1) / (sqrt(v / bc2) + eps) - lr wd p0.
__global__ void adamw(void* const* grad_peers, int first, int end, int world, int64_t lo, int64_t n,
                      const __nv_bfloat16* p0, const __nv_bfloat16* m0, const __nv_bfloat16* v0, float bc1, float bc2,
                      __nv_bfloat16* p_out, __nv_bfloat16* m_out, __nv_bfloat16* v_out) {
  using namespace plain_mlp;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    float sum = 0;
    for (int r = first; r < end; ++r) sum += static_cast<const float*>(grad_peers[r])[lo + i];
    const float g = sum, p = __bfloat162float(p0[i]);
    const float m = float(kBeta1) * __bfloat162float(m0[i]) + float(1.0 - kBeta1) * g;
    const float v = float(kBeta2) * __bfloat162float(v0[i]) + float(1.0 - kBeta2) * g * g;
    p_out[i] = __float2bfloat16(p - float(kLr) * (m / bc1) / (sqrtf(v / bc2) + float(kEps)) - float(kLr * kWd) * p);
    m_out[i] = __float2bfloat16(m);
    v_out[i] = __float2bfloat16(v);
  }
}

}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  const plain_mlp::Dims d = plain_mlp::dims(ctx);
  return plain::setup(ctx, {size_t(d.numel()) * 4}, plain_mlp::local_bytes(d));
}
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { plain::teardown(ctx); }

// in: X, Y, param_shard (symmetric), exp_avg, exp_avg_sq. out: param_new, m, v.
MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  const plain_mlp::Dims d = plain_mlp::dims(ctx);
  auto& st = plain::state(ctx);
  const int64_t P = d.shard(ctx->world_size), numel = d.numel();
  auto* flat = static_cast<char*>(st.local[0]);
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every rank's inputs are in place, last call's pulls done
  for (int r = 0; r < ctx->world_size; ++r) {
    const int64_t r_lo = std::min(numel, r * P), bytes = (std::min(numel, r_lo + P) - r_lo) * 2;
    if (plain::uses(ctx, r))
      MGK_CUDA_TRY(ctx, simple::copy(in[2].host_peers[r], flat + r_lo * 2, bytes, s));
    else if (bytes)
      MGK_CUDA_TRY(ctx, cudaMemsetAsync(flat + r_lo * 2, 0, size_t(bytes), s));
  }
  if (int e = plain_mlp::gradient(ctx, d, in[0].data, in[1].data, static_cast<float*>(st.sym[0].local), s)) return e;
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every rank's gradient is complete
  const int64_t lo = std::min(numel, ctx->rank * P), n = std::min(numel, lo + P) - lo;
  if (n > 0) {
    adamw<<<plain::blocks_for(n), 256, 0, s>>>(
        st.sym[0].peers, plain::first_source(ctx), plain::end_source(ctx), ctx->world_size, lo, n,
        static_cast<const __nv_bfloat16*>(in[2].data), static_cast<const __nv_bfloat16*>(in[3].data),
        static_cast<const __nv_bfloat16*>(in[4].data), d.bc1(), d.bc2(), static_cast<__nv_bfloat16*>(out[0].data),
        static_cast<__nv_bfloat16*>(out[1].data), static_cast<__nv_bfloat16*>(out[2].data));
    MGK_LAUNCH_CHECK(ctx);
  }
  return 0;
}
