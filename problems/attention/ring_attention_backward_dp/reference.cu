// Reference: ParallelKernelBench's ring attention backward over the CP group, averaged over
// the DP group, on cuDNN and NCCL. DP = 2 (1 when W is odd) replicas of CP = W / DP ranks:
// rank R has DP index d = R / CP and CP index c = R % CP; its CP group is the ranks d CP ..
// d CP + CP - 1 (contiguous), its DP group the ranks c, c + CP, ... (split from the harness's
// communicator once, at setup; ParallelKernelBench builds them in its input builder). Per call:
//  1. out, lse = cuDNN's forward attention of the local q over the local k, v, unmasked: the
//     out (bf16) and softmax_lse (fp32) that ParallelKernelBench's input builder computes.
//  2. CP steps: at step t the rank holds the K, V block of CP rank (c - t) mod CP, its own at
//     t = 0; NCCL send to c + 1 / recv from c - 1 on a second stream moves the next block
//     while this one is used. cuDNN's backward (mgk::dnn::AttentionBackward) gives the
//     block's dQ, dK, dV in bf16 from q, the block, out, dout and the local lse (so P of a
//     remote block is not normalised, as in ParallelKernelBench); a small kernel adds dQ into
//     an fp32 accumulator and stores dK, dV in fp32 in the slot of the block's owner.
//  3. ncclReduceScatter (fp32 sum) of the slots over CP: each owner gets the sum of its keys'
//     dK, dV over the whole group (ParallelKernelBench sends fp32 accumulators round a second
//     ring; the same sums, the same fp32 bytes on the wire).
//  4. dq, dk, dv = bf16 of the fp32 sums, then ncclAllReduce (bf16, average) over DP in place:
//     ParallelKernelBench's bf16 sum and divide by DP = 2 (exact in bf16).
#include "../ring_common.cuh"

namespace {

using bf16 = __nv_bfloat16;

inline int grid_for(int64_t n) { return int(std::min<int64_t>((n + 255) / 256, 132 * 16)); }

// One ring step's results: dq_acc (+)= dq_blk; dk_slot = dk_blk and dv_slot = dv_blk, in fp32.
__global__ void collect_kernel(const bf16* dq_blk, const bf16* dk_blk, const bf16* dv_blk, float* dq_acc,
                               float* dk_slot, float* dv_slot, int64_t n, bool first) {
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < n; e += int64_t(gridDim.x) * blockDim.x) {
    const float q = __bfloat162float(dq_blk[e]);
    dq_acc[e] = first ? q : dq_acc[e] + q;
    dk_slot[e] = __bfloat162float(dk_blk[e]);
    dv_slot[e] = __bfloat162float(dv_blk[e]);
  }
}

// The three fp32 sums to the bf16 outputs.
__global__ void finish_kernel(const float* dq, const float* dk, const float* dv, bf16* out_q, bf16* out_k,
                              bf16* out_v, int64_t n) {
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < n; e += int64_t(gridDim.x) * blockDim.x) {
    out_q[e] = __float2bfloat16_rn(dq[e]);
    out_k[e] = __float2bfloat16_rn(dk[e]);
    out_v[e] = __float2bfloat16_rn(dv[e]);
  }
}

struct RingAttentionBackwardDp : mgk::Reference, ring::RingSlots {
  using Reference::Reference;
  const int64_t DP = dim("DP"), CP = dim("CP"), B = dim("B"), S = dim("S"), T = dim("T"), H = dim("H"), D = dim("D");
  mgk::SplitComm cp, dp;
  mgk::dnn::Handle dnn;
  mgk::dnn::Attention forward;           // unmasked S x S: out and lse
  mgk::dnn::AttentionBackward backward;  // unmasked S x S, one ring block
  mgk::DeviceBuffer<bf16> o;             // [B, S, H, D]
  mgk::DeviceBuffer<float> lse;          // [B, H, S]
  mgk::DeviceBuffer<bf16> dq_blk, dk_blk, dv_blk;  // one block's
  mgk::DeviceBuffer<float> dq_acc;       // [B, S, H, D]
  mgk::DeviceBuffer<float> stage;        // [2][CP][B, S, H, D]: dK slots by owner, then dV slots
  mgk::DeviceBuffer<float> dkv;          // [2][B, S, H, D]: this rank's dK, dV sums

  int setup() {
    const int c = int(rank() % CP), r = int(rank() / CP);
    if (comm()) {  // collective over every rank: each rank joins one CP and one DP group
      MGK_NCCL_TRY(ctx, ncclCommSplit(comm(), r, c, cp.out(), nullptr));
      MGK_NCCL_TRY(ctx, ncclCommSplit(comm(), c, r, dp.out(), nullptr));
    }
    const int64_t n = B * S * H * D;
    if (setup_slots(ctx, n, int(CP))) return 1;
    for (auto* p : {&o, &dq_blk, &dk_blk, &dv_blk}) MGK_CUDA_TRY(ctx, p->allocate(n));
    MGK_CUDA_TRY(ctx, lse.allocate(B * H * S));
    MGK_CUDA_TRY(ctx, dq_acc.allocate(n));
    MGK_CUDA_TRY(ctx, stage.allocate(2 * CP * n));
    MGK_CUDA_TRY(ctx, dkv.allocate(2 * n));
    MGK_CUDNN_TRY(ctx, dnn.create());
    mgk::dnn::AttentionShape a;
    a.b = B, a.h = H, a.s_q = a.s_kv = S, a.d = D;
    a.q = a.k = a.v = a.o = mgk::dnn::bshd(H, S, D);
    a.scale = float(1.0 / std::sqrt(double(D)));
    a.causal = false;
    MGK_CUDNN_TRY(ctx, forward.plan(dnn, a));
    MGK_CUDNN_TRY(ctx, backward.plan(dnn, a));
    return 0;
  }

  // in: dout, q, k, v. out: dq, dk, dv.
  int run(const mgk_tensor* in, const mgk_tensor* out, cudaStream_t st) {
    const int64_t n = B * S * H * D;
    const int CP = int(this->CP), c = int(rank() % CP), next = (c + 1) % CP, prev = (c + CP - 1) % CP;
    const void *dout = in[0].data, *q = in[1].data, *k = in[2].data, *v = in[3].data;
    ncclComm_t cp = this->cp;
    // Step t (1 <= t < CP) moves the block of CP rank c - t into slot t % 2: every rank sends
    // the block it held at step t - 1 (its own at t = 1) and receives the next.
    auto comm_step = [&](int t) -> int {
      // Slot t % 2 last held step t-2's block: its backward must be done before it is overwritten.
      if (t >= 3) MGK_CUDA_TRY(ctx, cudaStreamWaitEvent(comm_stream, computed[t - 2]));
      const void* send_k = t == 1 ? k : slot[(t - 1) % 2][0];
      const void* send_v = t == 1 ? v : slot[(t - 1) % 2][1];
      MGK_RING_NCCL(ctx, cp, ncclGroupStart());
      MGK_RING_NCCL(ctx, cp, ncclSend(send_k, size_t(n), ncclBfloat16, next, cp, comm_stream));
      MGK_RING_NCCL(ctx, cp, ncclSend(send_v, size_t(n), ncclBfloat16, next, cp, comm_stream));
      MGK_RING_NCCL(ctx, cp, ncclRecv(slot[t % 2][0], size_t(n), ncclBfloat16, prev, cp, comm_stream));
      MGK_RING_NCCL(ctx, cp, ncclRecv(slot[t % 2][1], size_t(n), ncclBfloat16, prev, cp, comm_stream));
      MGK_RING_NCCL(ctx, cp, ncclGroupEnd());
      MGK_CUDA_TRY(ctx, cudaEventRecord(received[t], comm_stream));
      return 0;
    };

    MGK_CUDA_TRY(ctx, cudaEventRecord(start, st));
    MGK_CUDA_TRY(ctx, cudaStreamWaitEvent(comm_stream, start));
    if (CP > 1 && comm_step(1)) return 1;
    MGK_CUDNN_TRY(ctx, forward.run(dnn, q, k, v, o, lse, st));
    for (int t = 0; t < CP; ++t) {
      if (t + 1 < CP && comm_step(t + 1)) return 1;  // the next block moves while this one is used
      const void* kb = t == 0 ? k : slot[t % 2][0];
      const void* vb = t == 0 ? v : slot[t % 2][1];
      if (t > 0) MGK_CUDA_TRY(ctx, cudaStreamWaitEvent(st, received[t]));
      MGK_CUDNN_TRY(ctx, backward.run(dnn, q, kb, vb, o, dout, lse, dq_blk, dk_blk, dv_blk, st));
      if (t > 0) MGK_CUDA_TRY(ctx, cudaEventRecord(computed[t], st));
      const int64_t owner = (c - t + CP) % CP;
      collect_kernel<<<grid_for(n), 256, 0, st>>>(dq_blk, dk_blk, dv_blk, dq_acc, stage + owner * n,
                                                  stage + (CP + owner) * n, n, t == 0);
      MGK_LAUNCH_CHECK(ctx);
    }
    MGK_CUDA_TRY(ctx, cudaEventRecord(comm_done, comm_stream));
    MGK_CUDA_TRY(ctx, cudaStreamWaitEvent(st, comm_done));
    // CP = 1: the rank's own slots are the sums.
    float* dk = stage + c * n;
    float* dv = stage + (CP + c) * n;
    if (CP > 1) {
      dk = dkv, dv = dkv + n;
      MGK_RING_NCCL(ctx, cp, ncclGroupStart());
      MGK_RING_NCCL(ctx, cp, ncclReduceScatter(stage, dk, size_t(n), ncclFloat32, ncclSum, cp, st));
      MGK_RING_NCCL(ctx, cp, ncclReduceScatter(stage + CP * n, dv, size_t(n), ncclFloat32, ncclSum, cp, st));
      MGK_RING_NCCL(ctx, cp, ncclGroupEnd());
    }
    bf16* outs[3] = {static_cast<bf16*>(out[0].data), static_cast<bf16*>(out[1].data), static_cast<bf16*>(out[2].data)};
    finish_kernel<<<grid_for(n), 256, 0, st>>>(dq_acc, dk, dv, outs[0], outs[1], outs[2], n);
    MGK_LAUNCH_CHECK(ctx);
    if (DP > 1) {
      MGK_RING_NCCL(ctx, dp, ncclGroupStart());
      for (bf16* o : outs) MGK_RING_NCCL(ctx, dp, ncclAllReduce(o, o, size_t(n), ncclBfloat16, ncclAvg, dp, st));
      MGK_RING_NCCL(ctx, dp, ncclGroupEnd());
    }
    return 0;
  }

  int oracle(const mgk_oracle_args* a, cudaStream_t st);  // below, after its kernels
};

// ---------------------------------------------------------------------------------------
// The oracle. For each DP replica r' (ranks r' CP .. r' CP + CP - 1) it regenerates the
// replica's dout, q, k, v over the whole sequence T = CP S ([B, T, H, D], position g of rank
// r' CP + g / S) and computes, in fp64, the gradients of CP position c; the outputs are their
// average over the replicas. Bounds are in units of u = 2^-8 (the tolerance is 2 u scale);
// a_n = fp32_accumulation(n) is the fp32 error of an n-term sum per unit of its sum of |terms|.

constexpr int kCols = 4;  // D <= 128 = 4 x 32 lanes

__device__ inline double warp_sum(double x) {
  for (int off = 16; off; off /= 2) x += __shfl_xor_sync(0xffffffffu, x, off);
  return x;
}

// Per row of the replica's statistics arrays ([B, T, H], row (b T + g) H + h).
struct RowStats {
  double *lse, *row_dot, *e_row_dot, *e_lse, *qn, *gn, *kn, *vn;
};

// One warp per row (b, g, h) of the replica, over the S keys of g's own block (the local
// attention ParallelKernelBench's input builder runs):
//   lse = log sum_j exp(s_j), s_j = scale q.k_j;  O = sum_j p_j v_j, p_j = exp(s_j - lse)
//   row_dot = sum_c dout_c O_c (exact O: the reference's bf16 O is covered by e_row_dot)
// and the bounds a good implementation's rounding stays within:
//   E_O,c     = 2 |O_c| + min(pv_c, 4 sqrt(pv2_c)) + (a_S + 2 a_D m) pv_c, pv_c = sum p_j |v_jc|,
//               pv2_c = sum p_j^2 v_jc^2, m = max_j scale |q|.|k_j| (O's bf16 rounding, P in
//               bf16 inside the forward, the fp32 scores and sums; as ring_common.cuh's oracle)
//   e_row_dot = min(sum_c |dout_c| E_O,c, 4 sqrt(sum_c (dout_c E_O,c)^2)) + a_D sum |dout_c O_c|
//   e_lse     = a_S + 2 a_D m                (fp32 scores and log-sum-exp, absolute)
// plus the norms |q|, |dout|, |k|, |v| of the row (the backward's bounds use them for
// sum_c |a_c b_c| <= |a| |b|).
__global__ void row_stats_kernel(const double* q, const double* k, const double* v, const double* g, RowStats rs,
                                 int64_t B, int64_t S, int64_t T, int64_t H, int64_t D) {
  const int64_t rows = B * T * H, lane = threadIdx.x % 32;
  const double sm = 1.0 / sqrt(double(D)), a_s = mgk::oracle::fp32_accumulation(S),
               a_d = mgk::oracle::fp32_accumulation(D);
  for (int64_t row = (blockIdx.x * int64_t(blockDim.x) + threadIdx.x) / 32; row < rows;
       row += int64_t(gridDim.x) * blockDim.x / 32) {
    const int64_t h = row % H, pos = (row / H) % T, b = row / (H * T), first = pos / S * S;
    double qc[kCols], gc[kCols], kc[kCols], vc[kCols];
    for (int t = 0; t < kCols; ++t) {
      const int64_t col = lane + 32 * t;
      const bool in = col < D;
      qc[t] = in ? q[row * D + col] : 0.0;
      gc[t] = in ? g[row * D + col] : 0.0;
      kc[t] = in ? k[row * D + col] : 0.0;
      vc[t] = in ? v[row * D + col] : 0.0;
    }
    auto key = [&](int64_t j) { return ((b * T + j) * H + h) * D; };
    double m = -INFINITY, z = 0, mag_max = 0;
    for (int64_t j = first; j < first + S; ++j) {
      double dot = 0, mag = 0;
      for (int t = 0; t < kCols; ++t)
        if (lane + 32 * t < D) {
          const double kv = k[key(j) + lane + 32 * t];
          dot += qc[t] * kv;
          mag += fabs(qc[t] * kv);
        }
      dot = warp_sum(dot) * sm;
      mag = warp_sum(mag) * sm;
      const double m2 = fmax(m, dot);
      z = z * exp(m - m2) + exp(dot - m2);
      m = m2;
      mag_max = fmax(mag_max, mag);
    }
    const double lse = m + log(z);
    double o[kCols] = {}, pv[kCols] = {}, pv2[kCols] = {};
    for (int64_t j = first; j < first + S; ++j) {
      double dot = 0;
      for (int t = 0; t < kCols; ++t)
        if (lane + 32 * t < D) dot += qc[t] * k[key(j) + lane + 32 * t];
      const double p = exp(warp_sum(dot) * sm - lse);
      for (int t = 0; t < kCols; ++t) {
        const double vj = lane + 32 * t < D ? v[key(j) + lane + 32 * t] : 0.0;
        o[t] += p * vj;
        pv[t] += p * fabs(vj);
        pv2[t] += p * p * vj * vj;
      }
    }
    double rd = 0, lin = 0, quad = 0, mag = 0, qq = 0, gg = 0, kk = 0, vv = 0;
    for (int t = 0; t < kCols; ++t) {
      const double eo = 2.0 * fabs(o[t]) + fmin(pv[t], 4.0 * sqrt(pv2[t])) + (a_s + 2.0 * a_d * mag_max) * pv[t];
      rd += gc[t] * o[t];
      lin += fabs(gc[t]) * eo;
      quad += gc[t] * eo * gc[t] * eo;
      mag += fabs(gc[t] * o[t]);
      qq += qc[t] * qc[t], gg += gc[t] * gc[t], kk += kc[t] * kc[t], vv += vc[t] * vc[t];
    }
    rd = warp_sum(rd), lin = warp_sum(lin), quad = warp_sum(quad), mag = warp_sum(mag);
    qq = warp_sum(qq), gg = warp_sum(gg), kk = warp_sum(kk), vv = warp_sum(vv);
    if (lane == 0) {
      rs.lse[row] = lse;
      rs.row_dot[row] = rd;
      rs.e_row_dot[row] = fmin(lin, 4.0 * sqrt(quad)) + a_d * mag;
      rs.e_lse[row] = a_s + 2.0 * a_d * mag_max;
      rs.qn[row] = sqrt(qq), rs.gn[row] = sqrt(gg), rs.kn[row] = sqrt(kk), rs.vn[row] = sqrt(vv);
    }
  }
}

// The per-(query i, key j) quantities both gradient kernels need, from the two warp-reduced
// dot products:  p = exp(scale q_i.k_j - lse_i), dp = dout_i.v_j, ds = p (dp - row_dot_i) and
// the bounds  e_p = 2 a_D scale |q_i| |k_j| + e_lse_i   (p's relative error: the fp32 score,
// the lse), e_ds = p (|dp - row_dot_i| e_p + a_D |dout_i| |v_j| + e_row_dot_i).
struct Pair {
  double p, ds, e_p, e_ds;
};

__device__ inline Pair pair_at(double qk, double gv, int64_t qi, int64_t kj, const RowStats& rs, double sm,
                               double a_d) {
  Pair x;
  x.p = exp(qk * sm - rs.lse[qi]);
  const double centred = gv - rs.row_dot[qi];
  x.ds = x.p * centred;
  x.e_p = 2.0 * a_d * sm * rs.qn[qi] * rs.kn[kj] + rs.e_lse[qi];
  x.e_ds = x.p * (fabs(centred) * x.e_p + a_d * rs.gn[qi] * rs.vn[kj] + rs.e_row_dot[qi]);
  return x;
}

// Column sums with the magnitudes of their rounding (per lane, kCols columns):
//   scale = sum over blocks |block's sum| (each block's result rounded to bf16)
//         + min(sum |t|, 4 sqrt(sum t^2))  (the bf16 operand each term has inside cuDNN: dS or P)
//         + a_T sum |t|                    (fp32 accumulation over the blocks' terms)
//         + prop                           (the errors of dS or P carried by the other operand)
//         + |sum|                          (the final bf16 rounding)
struct ColumnSums {
  double sum[kCols] = {}, part[kCols] = {}, blocks[kCols] = {}, abs[kCols] = {}, sq[kCols] = {}, prop[kCols] = {};
  __device__ void add(int t, double term, double carried) {
    sum[t] += term, part[t] += term, abs[t] += fabs(term), sq[t] += term * term, prop[t] += carried;
  }
  __device__ void end_block() {
    for (int t = 0; t < kCols; ++t) blocks[t] += fabs(part[t]), part[t] = 0;
  }
  __device__ double scale(int t, double a_t) const {
    return blocks[t] + fmin(abs[t], 4.0 * sqrt(sq[t])) + a_t * abs[t] + prop[t] + fabs(sum[t]);
  }
};

// Adds replica r''s gradient of one element and its bound to the running (sum, |.| sum, bound
// sum) of the DP average.
struct Average {
  double *sum, *abs, *bound;
  __device__ void add(int64_t e, double g, double bound_g, bool first) {
    sum[e] = (first ? 0.0 : sum[e]) + g;
    abs[e] = (first ? 0.0 : abs[e]) + fabs(g);
    bound[e] = (first ? 0.0 : bound[e]) + bound_g;
  }
};

// dq: one warp per query row (b, i, h) of CP position c, over the replica's T keys:
// dq = scale sum_j ds_ij k_j, prop = scale sum_j e_ds |k_jc|; blocks of S keys.
__global__ void dq_kernel(const double* q, const double* k, const double* v, const double* g, RowStats rs,
                          Average avg, bool first, int c, int64_t B, int64_t S, int64_t T, int64_t H, int64_t D) {
  const int64_t rows = B * S * H, lane = threadIdx.x % 32;
  const double sm = 1.0 / sqrt(double(D)), a_d = mgk::oracle::fp32_accumulation(D),
               a_t = mgk::oracle::fp32_accumulation(T);
  for (int64_t row = (blockIdx.x * int64_t(blockDim.x) + threadIdx.x) / 32; row < rows;
       row += int64_t(gridDim.x) * blockDim.x / 32) {
    const int64_t h = row % H, i = (row / H) % S, b = row / (H * S);
    const int64_t qi = (b * T + c * S + i) * H + h;
    double qc[kCols], gc[kCols];
    for (int t = 0; t < kCols; ++t) {
      const bool in = lane + 32 * t < D;
      qc[t] = in ? q[qi * D + lane + 32 * t] : 0.0;
      gc[t] = in ? g[qi * D + lane + 32 * t] : 0.0;
    }
    ColumnSums acc;
    for (int64_t j = 0; j < T; ++j) {
      const int64_t kj = (b * T + j) * H + h;
      double qk = 0, gv = 0, kc[kCols];
      for (int t = 0; t < kCols; ++t) {
        const bool in = lane + 32 * t < D;
        kc[t] = in ? k[kj * D + lane + 32 * t] : 0.0;
        qk += qc[t] * kc[t];
        gv += in ? gc[t] * v[kj * D + lane + 32 * t] : 0.0;
      }
      const Pair x = pair_at(warp_sum(qk), warp_sum(gv), qi, kj, rs, sm, a_d);
      for (int t = 0; t < kCols; ++t) acc.add(t, sm * x.ds * kc[t], sm * x.e_ds * fabs(kc[t]));
      if (j % S == S - 1) acc.end_block();
    }
    for (int t = 0; t < kCols; ++t)
      if (lane + 32 * t < D) avg.add(row * D + lane + 32 * t, acc.sum[t], acc.scale(t, a_t), first);
  }
}

// dk, dv: one warp per key row (b, j, h) of CP position c, over the replica's T queries:
// dk = scale sum_i ds_ij q_i (prop scale sum e_ds |q_ic|), dv = sum_i p_ij dout_i (prop
// sum p e_p |dout_ic|); blocks of S queries.
__global__ void dkv_kernel(const double* q, const double* k, const double* v, const double* g, RowStats rs,
                           Average avg_k, Average avg_v, bool first, int c, int64_t B, int64_t S, int64_t T, int64_t H,
                           int64_t D) {
  const int64_t rows = B * S * H, lane = threadIdx.x % 32;
  const double sm = 1.0 / sqrt(double(D)), a_d = mgk::oracle::fp32_accumulation(D),
               a_t = mgk::oracle::fp32_accumulation(T);
  for (int64_t row = (blockIdx.x * int64_t(blockDim.x) + threadIdx.x) / 32; row < rows;
       row += int64_t(gridDim.x) * blockDim.x / 32) {
    const int64_t h = row % H, j = (row / H) % S, b = row / (H * S);
    const int64_t kj = (b * T + c * S + j) * H + h;
    double kc[kCols], vc[kCols];
    for (int t = 0; t < kCols; ++t) {
      const bool in = lane + 32 * t < D;
      kc[t] = in ? k[kj * D + lane + 32 * t] : 0.0;
      vc[t] = in ? v[kj * D + lane + 32 * t] : 0.0;
    }
    ColumnSums dk, dv;
    for (int64_t i = 0; i < T; ++i) {
      const int64_t qi = (b * T + i) * H + h;
      double qk = 0, gv = 0, qc[kCols], gc[kCols];
      for (int t = 0; t < kCols; ++t) {
        const bool in = lane + 32 * t < D;
        qc[t] = in ? q[qi * D + lane + 32 * t] : 0.0;
        gc[t] = in ? g[qi * D + lane + 32 * t] : 0.0;
        qk += qc[t] * kc[t];
        gv += gc[t] * vc[t];
      }
      const Pair x = pair_at(warp_sum(qk), warp_sum(gv), qi, kj, rs, sm, a_d);
      for (int t = 0; t < kCols; ++t) {
        dk.add(t, sm * x.ds * qc[t], sm * x.e_ds * fabs(qc[t]));
        dv.add(t, x.p * gc[t], x.p * x.e_p * fabs(gc[t]));
      }
      if (i % S == S - 1) dk.end_block(), dv.end_block();
    }
    for (int t = 0; t < kCols; ++t)
      if (lane + 32 * t < D) {
        const int64_t e = row * D + lane + 32 * t;
        avg_k.add(e, dk.sum[t], dk.scale(t, a_t), first);
        avg_v.add(e, dv.sum[t], dv.scale(t, a_t), first);
      }
  }
}

// dq, dk, dv of this rank's CP position c averaged over the DP replicas, exactly (fp64), from
// the regenerated inputs; per replica: its sequence's q, k, v, dout, the local statistics of
// every query row (row_stats_kernel), then dq_kernel and dkv_kernel for position c. The
// average's bound: each replica's (ColumnSums::scale) plus the bf16 all-reduce, which rounds
// DP - 1 partial sums of at most sum |g_r'| / DP each (after the exact 1 / DP = 1/2):
//   scale = (sum_r' scale_r' + (DP - 1) sum_r' |g_r'|) / DP.
int RingAttentionBackwardDp::oracle(const mgk_oracle_args* a, cudaStream_t st) {
  namespace o = mgk::oracle;
  // By value into the device lambdas:
  const int64_t B = this->B, S = this->S, T = this->T, H = this->H, D = this->D, CP = this->CP, DP = this->DP;
  if (D > 128) return mgk::set_error(ctx, "oracle: D = %lld > 128", (long long)D);
  const int c = int(rank() % CP);
  const int64_t full = B * T * H * D, n = B * S * H * D, rows = B * T * H;
  o::Scratch s(st);
  double *q = s.get<double>(full), *k = s.get<double>(full), *v = s.get<double>(full), *g = s.get<double>(full);
  RowStats rs{s.get<double>(rows), s.get<double>(rows), s.get<double>(rows), s.get<double>(rows),
              s.get<double>(rows), s.get<double>(rows), s.get<double>(rows), s.get<double>(rows)};
  Average avg[3];
  for (int x = 0; x < 3; ++x) avg[x] = {static_cast<double*>(a->expected[x]), s.get<double>(n), s.get<double>(n)};
  if (!s.ok()) return mgk::set_error(ctx, "oracle: out of device memory");
  const mgk_input_gen gd = a->gens[0], gq = a->gens[1], gk = a->gens[2], gv = a->gens[3];
  const int64_t warps = B * S * H;
  const int grid = int(std::min<int64_t>((warps * 32 + 127) / 128, 132 * 64));
  const int grid_rows = int(std::min<int64_t>((rows * 32 + 127) / 128, 132 * 64));
  for (int64_t r = 0; r < DP; ++r) {
    // Position p of the replica's sequence is rank r CP + p / S's position p % S.
    MGK_CUDA_TRY(ctx, o::for_each(
                          full,
                          [=] __device__(int64_t e) {
                            const int64_t col = e % D, h = (e / D) % H, p = (e / (D * H)) % T, b = e / (D * H * T);
                            const int64_t local = ((b * S + p % S) * H + h) * D + col;
                            const int holder = int(r * CP + p / S);
                            g[e] = mgk::gen_value(gd, holder, local);
                            q[e] = mgk::gen_value(gq, holder, local);
                            k[e] = mgk::gen_value(gk, holder, local);
                            v[e] = mgk::gen_value(gv, holder, local);
                          },
                          st));
    row_stats_kernel<<<grid_rows, 128, 0, st>>>(q, k, v, g, rs, B, S, T, H, D);
    MGK_CUDA_TRY(ctx, cudaGetLastError());
    dq_kernel<<<grid, 128, 0, st>>>(q, k, v, g, rs, avg[0], r == 0, c, B, S, T, H, D);
    MGK_CUDA_TRY(ctx, cudaGetLastError());
    dkv_kernel<<<grid, 128, 0, st>>>(q, k, v, g, rs, avg[1], avg[2], r == 0, c, B, S, T, H, D);
    MGK_CUDA_TRY(ctx, cudaGetLastError());
  }
  for (int x = 0; x < 3; ++x) {
    const Average av = avg[x];
    float* scale = a->scale[x];
    MGK_CUDA_TRY(ctx, o::for_each(
                          n,
                          [=] __device__(int64_t e) {
                            av.sum[e] /= double(DP);
                            scale[e] = float((av.bound[e] + double(DP - 1) * av.abs[e]) / double(DP));
                          },
                          st));
  }
  return 0;
}

}  // namespace

MGK_REFERENCE(RingAttentionBackwardDp)
