// Mutant of tests/gpu/candidates/attention/ring_attention_tp.cu. Class: a wrong group layout (TP and CP swapped).
// The keys of CP position c' are read from rank t CP + c' (CP-major ranks) instead of c' TP + t: the two mesh axes in the other order.
//
// The plain candidate's description:
// Plain: qkv = x w_qkv^T on cuBLAS into symmetric workspace; after a barrier, one thread per
// query row walks every earlier position of its CP group's sequence, reading the keys and
// values from their owners' workspace (peer pointers, ranks c' TP + t), with an fp32 online
// softmax; partial = ctx w_o^T into symmetric workspace; after a second barrier, out = the
// sum of the TP group's partials (ranks c TP .. c TP + TP - 1), and a third barrier keeps the
// workspace in place until every peer is done reading. -D MGK_LOCAL_ONLY=1: only the rank's
// own keys and its own partial.
#include "../../../candidates/plain_compute.cuh"

namespace {

using bf16 = __nv_bfloat16;

// qkv rows are [B S, 3 E]: q at column h D, k at E + h D, v at 2 E + h D.
__global__ void causal_attention(const bf16* const* qkv, bf16* ctx_out, int rank, int tp, int first_c, int world, int64_t B,
                                 int64_t S, int64_t HL, int64_t D) {
  const int64_t rows = B * S * HL, E = HL * D;
  const int c = rank / tp, t = rank % tp;
  const float scale = 1.0f / sqrtf(float(D));
  for (int64_t row = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; row < rows; row += int64_t(gridDim.x) * blockDim.x) {
    const int64_t h = row % HL, i = (row / HL) % S, b = row / (HL * S), g = c * S + i;
    const bf16* qi = qkv[rank] + (b * S + i) * 3 * E + h * D;
    float acc[128];
    for (int64_t d = 0; d < D; ++d) acc[d] = 0;
    float m = -INFINITY, z = 0;
    for (int64_t j = int64_t(first_c) * S; j <= g; ++j) {
      const bf16* kj = qkv[t * (world / tp) + j / S] + (b * S + j % S) * 3 * E + E + h * D;
      const bf16* vj = kj + E;
      float dot = 0;
      for (int64_t d = 0; d < D; ++d) dot += __bfloat162float(qi[d]) * __bfloat162float(kj[d]);
      const float x = dot * scale, m2 = fmaxf(m, x), shrink = expf(m - m2), p = expf(x - m2);
      for (int64_t d = 0; d < D; ++d) acc[d] = acc[d] * shrink + p * __bfloat162float(vj[d]);
      z = z * shrink + p;
      m = m2;
    }
    for (int64_t d = 0; d < D; ++d) ctx_out[(b * S + i) * E + h * D + d] = __float2bfloat16(acc[d] / z);
  }
}

}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  const int64_t B = mgk::dim(ctx, "B"), S = mgk::dim(ctx, "S"), E = mgk::dim(ctx, "E"), DM = mgk::dim(ctx, "DM");
  if (mgk::dim(ctx, "D") > 128) return mgk::set_error(ctx, "this candidate handles D <= 128");
  // symmetric: qkv [B S, 3 E], partial [B S, DM]; private: ctx [B S, E]
  return plain::setup(ctx, {size_t(B * S * 3 * E) * 2, size_t(B * S * DM) * 2}, {size_t(B * S * E) * 2});
}
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { plain::teardown(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  plain::State& ps = plain::state(ctx);
  const int64_t B = mgk::dim(ctx, "B"), S = mgk::dim(ctx, "S"), HL = mgk::dim(ctx, "HL"), D = mgk::dim(ctx, "D"),
                E = mgk::dim(ctx, "E"), DM = mgk::dim(ctx, "DM"), TP = mgk::dim(ctx, "TP");
  const int rank = ctx->rank, c = int(rank / TP);
  void* qkv = ps.sym[0].local;
  void* partial = ps.sym[1].local;
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // no peer still reads last call's workspace
  if (plain::gemm(ctx, s, false, true, B * S, 3 * E, DM, in[0].data, DM, in[1].data, DM, qkv, 3 * E))
    return mgk::set_error(ctx, "qkv GEMM failed");
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every rank's q, k, v are in place
  causal_attention<<<int(std::min<int64_t>((B * S * HL + 127) / 128, 132 * 8)), 128, 0, s>>>(
      reinterpret_cast<const bf16* const*>(ps.sym[0].peers), static_cast<bf16*>(ps.local[0]), rank, int(TP),
      MGK_LOCAL_ONLY ? c : 0, ctx->world_size, B, S, HL, D);
  MGK_LAUNCH_CHECK(ctx);
  if (plain::gemm(ctx, s, false, true, B * S, DM, E, ps.local[0], E, in[2].data, E, partial, DM))
    return mgk::set_error(ctx, "output GEMM failed");
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every rank's partial is in place
  const int first = MGK_LOCAL_ONLY ? rank : int(c * TP), count = MGK_LOCAL_ONLY ? 1 : int(TP);
  MGK_CUDA_TRY(ctx, simple::sum(MGK_BF16, ps.sym[1].peers + first, count, 0, out[0].data, B * S * DM, s));
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // no rank still reads this rank's workspace
  return 0;
}
