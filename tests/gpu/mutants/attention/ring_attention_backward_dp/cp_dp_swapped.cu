// Mutant of tests/gpu/candidates/attention/ring_attention_backward_dp.cu. Class: a wrong group layout (CP and DP swapped).
// The rank grid read DP-major (c = rank / DP, r = rank % DP) instead of CP-major (c = rank % CP, r = rank / CP).
//
// The plain candidate's description:
// Plain: one thread per query row computes the local attention (fp32 online softmax over the
// rank's own keys): lse and D = rowsum(dout * bf16(out)) into symmetric workspace. After a
// barrier, one thread per query row walks every key of its CP group (peers' k, v: ranks
// r CP .. r CP + CP - 1) for dq, and one thread per key row walks every query of the group
// (peers' q, dout, lse, D) for dk and dv, all in fp32, into symmetric workspace in bf16.
// After a second barrier, the outputs are the average of the DP group's (ranks c, c + CP,
// ...), and a third barrier keeps the workspace in place until every peer is done reading.
// -D MGK_LOCAL_ONLY=1: only the rank's own block and its own gradients (the peers' as zeros).
#include "../../../candidates/plain_compute.cuh"

namespace {

using bf16 = __nv_bfloat16;

struct Shape {
  int64_t B, S, H, D, CP, DP;
};

__device__ inline float load(const bf16* p, int64_t i) { return __bfloat162float(p[i]); }

// stats rows are [B, H, S]: lse at 0, D at B H S.
__global__ void local_forward(const bf16* q, const bf16* k, const bf16* v, const bf16* dout, float* stats, Shape s) {
  const int64_t rows = s.B * s.S * s.H, n_stats = s.B * s.H * s.S;
  const float scale = 1.0f / sqrtf(float(s.D));
  for (int64_t row = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; row < rows; row += int64_t(gridDim.x) * blockDim.x) {
    const int64_t h = row % s.H, i = (row / s.H) % s.S, b = row / (s.H * s.S);
    const bf16* qi = q + row * s.D;
    float acc[128];
    for (int64_t d = 0; d < s.D; ++d) acc[d] = 0;
    float m = -INFINITY, z = 0;
    for (int64_t j = 0; j < s.S; ++j) {
      const int64_t kj = ((b * s.S + j) * s.H + h) * s.D;
      float dot = 0;
      for (int64_t d = 0; d < s.D; ++d) dot += load(qi, d) * load(k, kj + d);
      const float x = dot * scale, m2 = fmaxf(m, x), shrink = expf(m - m2), p = expf(x - m2);
      for (int64_t d = 0; d < s.D; ++d) acc[d] = acc[d] * shrink + p * load(v, kj + d);
      z = z * shrink + p;
      m = m2;
    }
    float row_dot = 0;
    for (int64_t d = 0; d < s.D; ++d) row_dot += load(dout, row * s.D + d) * __bfloat162float(__float2bfloat16(acc[d] / z));
    const int64_t at = (b * s.H + h) * s.S + i;
    stats[at] = m + logf(z);
    stats[n_stats + at] = row_dot;
  }
}

// grads is [3][B, S, H, D] bf16: dq, dk, dv. The replica's CP ranks are first .. first + CP - 1;
// the blocks used are those of CP ranks c0 .. c1.
__global__ void gradients(const bf16* const* q, const bf16* const* k, const bf16* const* v, const bf16* const* dout,
                          const float* const* stats, bf16* grads, int rank, int first, int c0, int c1, Shape s) {
  const int64_t rows = s.B * s.S * s.H, n = rows * s.D, n_stats = s.B * s.H * s.S;
  const float scale = 1.0f / sqrtf(float(s.D));
  // Threads [0, rows): query rows (dq); [rows, 2 rows): key rows (dk, dv).
  for (int64_t t = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; t < 2 * rows; t += int64_t(gridDim.x) * blockDim.x) {
    const bool query = t < rows;
    const int64_t row = query ? t : t - rows, h = row % s.H, b = row / (s.H * s.S);
    const int64_t own = (b * s.H + h) * s.S + (row / s.H) % s.S;
    float a0[128], a1[128];
    for (int64_t d = 0; d < s.D; ++d) a0[d] = a1[d] = 0;
    for (int cc = c0; cc <= c1; ++cc) {
      const int peer = first + cc;
      for (int64_t x = 0; x < s.S; ++x) {  // the peer's key (query rows) or query (key rows) x
        const int64_t other = ((b * s.S + x) * s.H + h) * s.D, other_stat = (b * s.H + h) * s.S + x;
        const bf16 *qi, *kj, *vj, *gi;
        float lse, row_dot;
        if (query) {
          qi = q[rank] + row * s.D, gi = dout[rank] + row * s.D, kj = k[peer] + other, vj = v[peer] + other;
          lse = stats[rank][own], row_dot = stats[rank][n_stats + own];
        } else {
          kj = k[rank] + row * s.D, vj = v[rank] + row * s.D, qi = q[peer] + other, gi = dout[peer] + other;
          lse = stats[peer][other_stat], row_dot = stats[peer][n_stats + other_stat];
        }
        float qk = 0, dp = 0;
        for (int64_t d = 0; d < s.D; ++d) {
          qk += load(qi, d) * load(kj, d);
          dp += load(gi, d) * load(vj, d);
        }
        const float p = expf(qk * scale - lse), ds = p * (dp - row_dot);
        if (query) {
          for (int64_t d = 0; d < s.D; ++d) a0[d] += ds * load(kj, d);
        } else {
          for (int64_t d = 0; d < s.D; ++d) a0[d] += ds * load(qi, d), a1[d] += p * load(gi, d);
        }
      }
    }
    if (query) {
      for (int64_t d = 0; d < s.D; ++d) grads[row * s.D + d] = __float2bfloat16(a0[d] * scale);
    } else {
      for (int64_t d = 0; d < s.D; ++d) {
        grads[n + row * s.D + d] = __float2bfloat16(a0[d] * scale);
        grads[2 * n + row * s.D + d] = __float2bfloat16(a1[d]);
      }
    }
  }
}

// out_x = (sum over the DP group's ranks c + r CP, r in [r0, r1], of grads_x) / DP.
__global__ void average(const bf16* const* grads, bf16* dq, bf16* dk, bf16* dv, int c, int r0, int r1, Shape s) {
  const int64_t n = s.B * s.S * s.H * s.D;
  bf16* outs[3] = {dq, dk, dv};
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < 3 * n; e += int64_t(gridDim.x) * blockDim.x) {
    float sum = 0;
    for (int r = r0; r <= r1; ++r) sum += __bfloat162float(grads[c + r * s.CP][e]);
    outs[e / n][e % n] = __float2bfloat16(sum / float(s.DP));
  }
}

Shape shape(mgk_ctx* ctx) {
  auto d = [&](const char* n) { return mgk::dim(ctx, n); };
  return {d("B"), d("S"), d("H"), d("D"), d("CP"), d("DP")};
}

}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  const Shape s = shape(ctx);
  if (s.D > 128) return mgk::set_error(ctx, "this candidate handles D <= 128");
  // symmetric: stats [2][B, H, S] fp32 (lse, D); grads [3][B, S, H, D] bf16
  return plain::setup(ctx, {size_t(2 * s.B * s.H * s.S) * 4, size_t(3 * s.B * s.S * s.H * s.D) * 2});
}
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { plain::teardown(ctx); }

// in: dout, q, k, v. out: dq, dk, dv.
MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t st) {
  plain::State& ps = plain::state(ctx);
  const Shape s = shape(ctx);
  const int rank = ctx->rank, c = int(rank / s.DP), r = int(rank % s.DP);
  auto peers = [&](int i) { return reinterpret_cast<const bf16* const*>(in[i].peers); };
  const int64_t rows = s.B * s.S * s.H;
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, st));  // no peer still reads last call's workspace
  local_forward<<<int(std::min<int64_t>((rows + 127) / 128, 132 * 8)), 128, 0, st>>>(
      static_cast<const bf16*>(in[1].data), static_cast<const bf16*>(in[2].data), static_cast<const bf16*>(in[3].data),
      static_cast<const bf16*>(in[0].data), static_cast<float*>(ps.sym[0].local), s);
  MGK_LAUNCH_CHECK(ctx);
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, st));  // every rank's lse and D are in place
  const int c0 = MGK_LOCAL_ONLY ? c : 0, c1 = MGK_LOCAL_ONLY ? c : int(s.CP) - 1;
  gradients<<<int(std::min<int64_t>((2 * rows + 127) / 128, 132 * 8)), 128, 0, st>>>(
      peers(1), peers(2), peers(3), peers(0), reinterpret_cast<const float* const*>(ps.sym[0].peers),
      static_cast<bf16*>(ps.sym[1].local), rank, int(r * s.CP), c0, c1, s);
  MGK_LAUNCH_CHECK(ctx);
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, st));  // every rank's gradients are in place
  const int r0 = MGK_LOCAL_ONLY ? r : 0, r1 = MGK_LOCAL_ONLY ? r : int(s.DP) - 1;
  average<<<int(std::min<int64_t>((3 * rows * s.D + 255) / 256, 132 * 16)), 256, 0, st>>>(
      reinterpret_cast<const bf16* const*>(ps.sym[1].peers), static_cast<bf16*>(out[0].data),
      static_cast<bf16*>(out[1].data), static_cast<bf16*>(out[2].data), c, r0, r1, s);
  MGK_LAUNCH_CHECK(ctx);
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, st));  // no rank still reads this rank's workspace
  return 0;
}
