// Mutant of tests/gpu/candidates/attention/ring_attention_pp.cu. Class: off by one in an index (the causal bound).
// Position i attends to j < i instead of j <= i: the causal mask's diagonal dropped.
//
// The plain candidate's description:
// Plain: the stages run one after the other, every rank taking part in every barrier. In stage
// s's turn its ranks (s CP .. s CP + CP - 1) take their input (stage 0: hidden_states; a later
// stage: a copy of rank R - CP's output, read from its workspace through the peer pointer),
// compute qkv = x w_qkv^T on cuBLAS into symmetric workspace, and after a barrier one thread
// per query row walks every earlier position of the stage's sequence, reading the keys and
// values from their owners' workspace (peer pointers, ranks s CP + c'), with an fp32 online
// softmax; then y = ctx w_o^T into symmetric workspace, copied to out, and a barrier hands it
// to the next stage. The barrier that ends the last turn keeps the workspace in place until
// every peer is done reading. -D MGK_LOCAL_ONLY=1: only the rank's own keys, and a later
// stage starts from its own hidden_states.
#include "../../../candidates/plain_compute.cuh"

namespace {

using bf16 = __nv_bfloat16;

// qkv rows are [B S, 3 E]: q at column h D, k at E + h D, v at 2 E + h D. The stage's CP
// position c' lives on rank first_rank + c'.
__global__ void causal_attention(const bf16* const* qkv, bf16* ctx_out, int rank, int first_rank, int first_c,
                                 int64_t B, int64_t S, int64_t NH, int64_t D) {
  const int64_t rows = B * S * NH, E = NH * D;
  const int c = rank - first_rank;
  const float scale = 1.0f / sqrtf(float(D));
  for (int64_t row = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; row < rows;
       row += int64_t(gridDim.x) * blockDim.x) {
    const int64_t h = row % NH, i = (row / NH) % S, b = row / (NH * S), g = c * S + i;
    const bf16* qi = qkv[rank] + (b * S + i) * 3 * E + h * D;
    float acc[128];
    for (int64_t d = 0; d < D; ++d) acc[d] = 0;
    float m = -INFINITY, z = 0;
    for (int64_t j = int64_t(first_c) * S; j < g; ++j) {
      const bf16* kj = qkv[first_rank + j / S] + (b * S + j % S) * 3 * E + E + h * D;
      const bf16* vj = kj + E;
      float dot = 0;
      for (int64_t d = 0; d < D; ++d) dot += __bfloat162float(qi[d]) * __bfloat162float(kj[d]);
      const float x = dot * scale, m2 = fmaxf(m, x), shrink = expf(m - m2), p = expf(x - m2);
      for (int64_t d = 0; d < D; ++d) acc[d] = acc[d] * shrink + p * __bfloat162float(vj[d]);
      z = z * shrink + p;
      m = m2;
    }
    for (int64_t d = 0; d < D; ++d) ctx_out[(b * S + i) * E + h * D + d] = __float2bfloat16(z > 0 ? acc[d] / z : 0.0f);
  }
}

}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  const int64_t B = mgk::dim(ctx, "B"), S = mgk::dim(ctx, "S"), E = mgk::dim(ctx, "E"), DM = mgk::dim(ctx, "DM");
  if (mgk::dim(ctx, "D") > 128) return mgk::set_error(ctx, "this candidate handles D <= 128");
  // symmetric: qkv [B S, 3 E], y [B S, DM]; private: ctx [B S, E], x [B S, DM] (a later stage's input)
  return plain::setup(ctx, {size_t(B * S * 3 * E) * 2, size_t(B * S * DM) * 2},
                      {size_t(B * S * E) * 2, size_t(B * S * DM) * 2});
}
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { plain::teardown(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  plain::State& ps = plain::state(ctx);
  const int64_t B = mgk::dim(ctx, "B"), S = mgk::dim(ctx, "S"), NH = mgk::dim(ctx, "NH"), D = mgk::dim(ctx, "D"),
                E = mgk::dim(ctx, "E"), DM = mgk::dim(ctx, "DM"), PP = mgk::dim(ctx, "PP"), CP = mgk::dim(ctx, "CP");
  const int rank = ctx->rank, stage = int(rank / CP), c = int(rank % CP), first_rank = int(stage * CP);
  void* qkv = ps.sym[0].local;
  void* y = ps.sym[1].local;
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // no peer still reads last call's workspace
  for (int turn = 0; turn < PP; ++turn) {
    const bool mine = turn == stage;
    if (mine) {
      const void* x = in[0].data;
      if (stage > 0 && !MGK_LOCAL_ONLY) {  // the previous stage's output, same CP position
        MGK_CUDA_TRY(ctx, plain::copy_matrix(ps.sym[1].host_peers[rank - CP], DM, ps.local[1], DM, B * S, DM, s));
        x = ps.local[1];
      }
      if (plain::gemm(ctx, s, false, true, B * S, 3 * E, DM, x, DM, in[1].data, DM, qkv, 3 * E))
        return mgk::set_error(ctx, "qkv GEMM failed");
    }
    MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // the stage's q, k, v are in place
    if (mine) {
      causal_attention<<<int(std::min<int64_t>((B * S * NH + 127) / 128, 132 * 8)), 128, 0, s>>>(
          reinterpret_cast<const bf16* const*>(ps.sym[0].peers), static_cast<bf16*>(ps.local[0]), rank, first_rank,
          MGK_LOCAL_ONLY ? c : 0, B, S, NH, D);
      MGK_LAUNCH_CHECK(ctx);
      if (plain::gemm(ctx, s, false, true, B * S, DM, E, ps.local[0], E, in[2].data, E, y, DM))
        return mgk::set_error(ctx, "output GEMM failed");
      MGK_CUDA_TRY(ctx, plain::copy_matrix(y, DM, out[0].data, DM, B * S, DM, s));
    }
    // The stage's y is in place for the next stage, and no rank still reads its q, k, v.
    MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));
  }
  return 0;
}
