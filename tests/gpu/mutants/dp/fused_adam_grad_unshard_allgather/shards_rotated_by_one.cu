// Mutant of tests/gpu/candidates/dp/fused_adam_grad_unshard_allgather.cu. Class: off by one in a rank offset.
// Rank r's updated shard lands in slot r + 1 (mod W) of w_full.
//
// The plain candidate's description:
// Plain: Adam in fp32 on this rank's shard into symmetric memory, a barrier, then every
// rank's updated shard pulled from its peer pointer into w_full (the all-gather).
#include <cmath>

#include "../../../candidates/plain_compute.cuh"

namespace {
constexpr double kLr = 0.1, kBeta1 = 0.9, kBeta2 = 0.999, kEps = 1e-8;

__global__ void adam(const __nv_bfloat16* g, const __nv_bfloat16* w0, const __nv_bfloat16* m0, const __nv_bfloat16* v0,
                     int64_t n, float bc1, float bc2, __nv_bfloat16* w, __nv_bfloat16* m_out, __nv_bfloat16* v_out) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const float gi = __bfloat162float(g[i]);
    const float m = float(kBeta1) * __bfloat162float(m0[i]) + float(1.0 - kBeta1) * gi;
    const float v = float(kBeta2) * __bfloat162float(v0[i]) + float(1.0 - kBeta2) * gi * gi;
    w[i] = __float2bfloat16(__bfloat162float(w0[i]) - float(kLr) * (m / bc1) / (sqrtf(v / bc2) + float(kEps)));
    m_out[i] = __float2bfloat16(m);
    v_out[i] = __float2bfloat16(v);
  }
}
}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) { return plain::setup(ctx, {size_t(mgk::dim(ctx, "P")) * 2}); }
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { plain::teardown(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  const int64_t P = mgk::dim(ctx, "P"), step = mgk::dim(ctx, "STEP");
  auto& st = plain::state(ctx);
  const float bc1 = float(1.0 - std::pow(kBeta1, double(step))), bc2 = float(1.0 - std::pow(kBeta2, double(step)));
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // the peers' pulls of the last call are done
  adam<<<plain::blocks_for(P), 256, 0, s>>>(
      static_cast<const __nv_bfloat16*>(in[0].data), static_cast<const __nv_bfloat16*>(in[1].data),
      static_cast<const __nv_bfloat16*>(in[2].data), static_cast<const __nv_bfloat16*>(in[3].data), P, bc1, bc2,
      static_cast<__nv_bfloat16*>(st.sym[0].local), static_cast<__nv_bfloat16*>(out[1].data),
      static_cast<__nv_bfloat16*>(out[2].data));
  MGK_LAUNCH_CHECK(ctx);
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every shard is updated
  auto* w_full = static_cast<char*>(out[0].data);
  for (int r = 0; r < ctx->world_size; ++r) {
    if (plain::uses(ctx, r)) {
      MGK_CUDA_TRY(ctx, simple::copy(st.sym[0].host_peers[r], w_full + ((r + 1) % ctx->world_size) * P * 2, P * 2, s));
    } else {
      MGK_CUDA_TRY(ctx, cudaMemsetAsync(w_full + r * P * 2, 0, P * 2, s));
    }
  }
  return 0;
}
