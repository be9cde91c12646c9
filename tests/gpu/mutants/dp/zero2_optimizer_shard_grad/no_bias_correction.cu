// Mutant of tests/gpu/candidates/dp/zero2_optimizer_shard_grad.cu (plain_mlp.cuh's zero_run). Class: a missing term (Adam's bias correction).
// m and v used without dividing by 1 - beta^step, the update of the Adam paper's simplified form.
#include "../../../candidates/plain_mlp.cuh"

// plain_mlp::zero_run, copied here with the one change marked BUG.
namespace {
__global__ void adam_mut(void* const* grad_peers, int first, int end, int world, const __nv_bfloat16* params, int64_t lo,
                         int64_t hi, float bc1, float bc2, __nv_bfloat16* p_shard, __nv_bfloat16* m_shard,
                         __nv_bfloat16* v_shard) {
  using namespace plain_mlp;
  for (int64_t i = lo + blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < hi; i += int64_t(gridDim.x) * blockDim.x) {
    float sum = 0;
    for (int r = first; r < end; ++r) sum += static_cast<const float*>(grad_peers[r])[i];
    const float g = sum / float(world);
    const float m = float(1.0 - kBeta1) * g, v = float(1.0 - kBeta2) * g * g;
    const float p = __bfloat162float(params[i]) - float(kLr) * (m / bc1) / (sqrtf(v / bc2) + float(kEps));
    p_shard[i - lo] = __float2bfloat16(p);
    m_shard[i - lo] = __float2bfloat16(m);
    v_shard[i - lo] = __float2bfloat16(v);
  }
}

int run(mgk_ctx* ctx, const mgk_tensor* in, const mgk_tensor* out, cudaStream_t s) {
  using namespace plain_mlp;
  const Dims d = dims(ctx);
  auto& st = plain::state(ctx);
  const int64_t P = d.shard(ctx->world_size), lo = std::min(d.numel(), ctx->rank * P), hi = std::min(d.numel(), lo + P);
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every rank's inputs are in place, last call's pulls done
  if (int e = load_params(ctx, d, in, 2, 0, s)) return e;
  if (int e = gradient(ctx, d, in[0].data, in[1].data, static_cast<float*>(st.sym[0].local), s)) return e;
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every rank's gradient is complete
  if (hi > lo) {
    adam_mut<<<plain::blocks_for(hi - lo), 256, 0, s>>>(
        st.sym[0].peers, 0, ctx->world_size, ctx->world_size, static_cast<const __nv_bfloat16*>(st.local[0]), lo, hi,
        1.0f, 1.0f /* BUG */, static_cast<__nv_bfloat16*>(st.sym[1].local), static_cast<__nv_bfloat16*>(out[4].data),
        static_cast<__nv_bfloat16*>(out[5].data));
    MGK_LAUNCH_CHECK(ctx);
  }
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every shard is updated
  gather_shards<<<plain::blocks_for(d.numel()), 256, 0, s>>>(st.sym[1].peers, 0, ctx->world_size, P,
                                                             params_of(d, out, 0), d.numel());
  MGK_LAUNCH_CHECK(ctx);
  return 0;
}
}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) { return plain_mlp::zero_setup(ctx); }
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { plain::teardown(ctx); }
MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  return run(ctx, in, out, s);
}
