// Mutant of tests/gpu/candidates/attention/ulysses_attention_e2e.cu. Class: wrong elementwise function (scale).
// The scores are not multiplied by 1 / sqrt(D).
//
// The plain candidate's description:
// Plain: after a barrier, every rank computes the q|k|v of every rank's positions itself,
// with cuBLAS on the owner's x and w_qkv (peer pointers), rounded to bf16 as the problem
// says; one thread per (b, i, h) row of its own positions walks all T keys with an fp32
// online softmax and writes the bf16 attention output; cuBLAS applies w_o. A second barrier
// keeps the peers' x and w_qkv in place until every rank is done reading.
// -D MGK_LOCAL_ONLY=1: only the rank's own positions are keys (attention over S, not T).
#include "../../../candidates/plain_compute.cuh"

namespace {

// qkv: [W][B][S][3E]; attn: [B S, E], this rank's positions.
__global__ void attention(const __nv_bfloat16* qkv, __nv_bfloat16* attn, int rank, int first, int end, int64_t B,
                          int64_t S, int64_t H, int64_t D) {
  const int64_t E = H * D, rows = B * S * H;
  const float scale = 1.0f;
  for (int64_t row = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; row < rows; row += int64_t(gridDim.x) * blockDim.x) {
    const int64_t h = row % H, i = (row / H) % S, b = row / (H * S);
    const __nv_bfloat16* q = qkv + ((int64_t(rank) * B + b) * S + i) * 3 * E + h * D;
    float acc[128];
    for (int64_t c = 0; c < D; ++c) acc[c] = 0;
    float m = -INFINITY, z = 0;
    for (int s = first; s < end; ++s)
      for (int64_t j = 0; j < S; ++j) {
        const __nv_bfloat16* k = qkv + ((int64_t(s) * B + b) * S + j) * 3 * E + E + h * D;
        const __nv_bfloat16* v = k + E;
        float dot = 0;
        for (int64_t c = 0; c < D; ++c) dot += __bfloat162float(q[c]) * __bfloat162float(k[c]);
        const float x = dot * scale, m2 = fmaxf(m, x), shrink = expf(m - m2), p = expf(x - m2);
        for (int64_t c = 0; c < D; ++c) acc[c] = acc[c] * shrink + p * __bfloat162float(v[c]);
        z = z * shrink + p;
        m = m2;
      }
    for (int64_t c = 0; c < D; ++c) attn[(b * S + i) * E + h * D + c] = __float2bfloat16(acc[c] / z);
  }
}

}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  if (mgk::dim(ctx, "D") > 128) return mgk::set_error(ctx, "this candidate handles D <= 128");
  const size_t BS = mgk::dim(ctx, "B") * mgk::dim(ctx, "S"), E = mgk::dim(ctx, "E");
  return plain::setup(ctx, {}, {size_t(ctx->world_size) * BS * 3 * E * 2, BS * E * 2});
}
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { plain::teardown(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  const int64_t B = mgk::dim(ctx, "B"), S = mgk::dim(ctx, "S"), H = mgk::dim(ctx, "H"), D = mgk::dim(ctx, "D"),
                E = mgk::dim(ctx, "E"), BS = B * S;
  auto& local = plain::state(ctx).local;
  auto* qkv = static_cast<__nv_bfloat16*>(local[0]);
  auto* attn = static_cast<__nv_bfloat16*>(local[1]);
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every rank's x and w_qkv of this call are in place
  for (int r = plain::first_source(ctx); r < plain::end_source(ctx); ++r)
    MGK_CUBLAS_TRY(ctx, plain::gemm(ctx, s, false, true, BS, 3 * E, E, in[0].host_peers[r], E, in[1].host_peers[r], E,
                                    qkv + r * BS * 3 * E, 3 * E));
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // no rank still reads this rank's x and w_qkv
  attention<<<int(std::min<int64_t>((BS * H + 127) / 128, 132 * 8)), 128, 0, s>>>(
      qkv, attn, ctx->rank, plain::first_source(ctx), plain::end_source(ctx), B, S, H, D);
  MGK_LAUNCH_CHECK(ctx);
  MGK_CUBLAS_TRY(ctx, plain::gemm(ctx, s, false, true, BS, E, E, attn, E, in[2].data, E, out[0].data, E));
  return 0;
}
