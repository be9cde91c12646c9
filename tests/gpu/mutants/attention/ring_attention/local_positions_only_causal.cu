// Mutant of tests/gpu/candidates/attention/ring_attention.cu. Class: off by one in a rank offset (the global position).
// The causal bound uses the local index i instead of the global position rank S + i: later ranks see too few keys.
//
// The plain candidate's description:
// Plain: after a barrier, one thread per query row walks every earlier position of the whole
// sequence, reading each key and value from its owner's memory (peer pointers), with an
// fp32 online softmax; a second barrier keeps the peers' K and V in place until every rank
// is done reading. -D MGK_LOCAL_ONLY=1: only the rank's own positions.
#include "../../../candidates/plain_compute.cuh"

namespace {

__global__ void causal_attention(const __nv_bfloat16* q, const __nv_bfloat16* const* k, const __nv_bfloat16* const* v,
                                 __nv_bfloat16* out, int rank, int first_rank, int64_t B, int64_t S, int64_t H,
                                 int64_t D) {
  const int64_t rows = B * S * H;
  const float scale = 1.0f / sqrtf(float(D));
  for (int64_t row = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; row < rows; row += int64_t(gridDim.x) * blockDim.x) {
    const int64_t h = row % H, i = (row / H) % S, b = row / (H * S), g = i;
    const __nv_bfloat16* qi = q + row * D;
    float acc[128];
    for (int64_t c = 0; c < D; ++c) acc[c] = 0;
    float m = -INFINITY, z = 0;
    for (int64_t j = int64_t(first_rank) * S; j <= g; ++j) {
      const int64_t at = ((b * S + j % S) * H + h) * D;
      const __nv_bfloat16 *kj = k[j / S] + at, *vj = v[j / S] + at;
      float dot = 0;
      for (int64_t c = 0; c < D; ++c) dot += __bfloat162float(qi[c]) * __bfloat162float(kj[c]);
      const float x = dot * scale, m2 = fmaxf(m, x), shrink = expf(m - m2), p = expf(x - m2);
      for (int64_t c = 0; c < D; ++c) acc[c] = acc[c] * shrink + p * __bfloat162float(vj[c]);
      z = z * shrink + p;
      m = m2;
    }
    for (int64_t c = 0; c < D; ++c) out[row * D + c] = __float2bfloat16(acc[c] / z);
  }
}

}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  if (mgk::dim(ctx, "D") > 128) return mgk::set_error(ctx, "this candidate handles D <= 128");
  return plain::setup(ctx, {});
}
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { plain::teardown(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  const int64_t B = mgk::dim(ctx, "B"), S = mgk::dim(ctx, "S"), H = mgk::dim(ctx, "H"), D = mgk::dim(ctx, "D");
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every rank's K and V of this call are in place
  causal_attention<<<int(std::min<int64_t>((B * S * H + 127) / 128, 132 * 8)), 128, 0, s>>>(
      static_cast<const __nv_bfloat16*>(in[0].data), reinterpret_cast<const __nv_bfloat16* const*>(in[1].peers),
      reinterpret_cast<const __nv_bfloat16* const*>(in[2].peers), static_cast<__nv_bfloat16*>(out[0].data), ctx->rank,
      plain::first_source(ctx), B, S, H, D);
  MGK_LAUNCH_CHECK(ctx);
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // no rank still reads this rank's K and V
  return 0;
}
