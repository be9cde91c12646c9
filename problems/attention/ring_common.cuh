// Shared by the ring attention problems (attention/ring_attention, ring_attention_tp,
// ring_attention_pp): ParallelKernelBench's causal ring over a group of `W` ranks, of which
// this rank is `r`, sequence positions sharded contiguously by group rank ([r S, (r+1) S)).
// K and V travel the ring (NCCL send/recv to r+1, from r-1) while cuDNN's fused attention runs
// on the block in hand: the causal diagonal block first (rank r's own keys), then the blocks
// of ranks r-1, r-2, ..., 0 unmasked, each giving (O_blk bf16, lse_blk fp32) that a small
// kernel merges into fp32 accumulators by the log-sum-exp rule; the last merge writes bf16.
// Causality means rank r needs only the r blocks before it, so the ring carries no block past
// the last rank that uses it (PKB sends every block all the way round, unused); the next
// block's transfer runs on a second stream while the current block is computed.
// q, k, v and out are [B, S, H, D] bf16, contiguous. `comm` null: no communication (the
// harness's timing without it), every NCCL call is skipped.
#pragma once
#include <cmath>
#include <memory>

#include "mgk/cudnn_attention.h"
#include "mgk/reference_kit.h"

namespace ring {

// Merges one block (o_b, l_b) into the running (acc, acc_lse) of the same rows: with
// l = log(e^l_acc + e^l_b), acc = acc e^(l_acc - l) + o_b e^(l_b - l). One warp per row
// (b, i, h), lanes over D. `first`: the accumulators start as the block; `last`: the result
// goes to `out` in bf16 instead of back to the accumulators.
__global__ void merge_kernel(const __nv_bfloat16* blk, const float* blk_lse, float* acc, float* acc_lse,
                             __nv_bfloat16* out, int64_t B, int64_t S, int64_t H, int64_t D, bool first, bool last) {
  const int64_t rows = B * S * H, lane = threadIdx.x % 32;
  for (int64_t row = (blockIdx.x * int64_t(blockDim.x) + threadIdx.x) / 32; row < rows;
       row += int64_t(gridDim.x) * blockDim.x / 32) {
    const int64_t h = row % H, i = (row / H) % S, b = row / (H * S);
    const int64_t stat = (b * H + h) * S + i;
    const float lb = blk_lse[stat];
    float la = lb, wa = 0.0f, wb = 1.0f;
    if (!first) {
      la = acc_lse[stat];
      const float hi = fmaxf(la, lb), lo = fminf(la, lb);
      const float l = hi + log1pf(expf(lo - hi));
      wa = expf(la - l);
      wb = expf(lb - l);
      la = l;
    }
    __syncwarp();  // every lane has read acc_lse before lane 0 overwrites it
    for (int64_t c = lane; c < D; c += 32) {
      const int64_t e = row * D + c;
      const float o = (first ? 0.0f : acc[e] * wa) + __bfloat162float(blk[e]) * wb;
      if (last) out[e] = __float2bfloat16_rn(o);
      else acc[e] = o;
    }
    if (!last && lane == 0) acc_lse[stat] = la;
  }
}

#define MGK_RING_NCCL(ctx, comm, expr) \
  do {                                 \
    if (comm) MGK_NCCL_TRY(ctx, expr); \
  } while (0)

using mgk::Event;
using mgk::Stream;

// What a ring that passes K, V blocks on a second stream needs beside its compute (Ring below,
// and attention/ring_attention_backward_dp): two landing slots of one block each, the stream
// the transfers run on, and the events that order them against the compute: `start` and
// `comm_done` bracket a call, received[t] / computed[t] mark step t's block in and used.
struct RingSlots {
  // Slots of `block` bf16 elements each, and events for `steps` ring steps.
  int setup_slots(mgk_ctx* ctx, int64_t block, int steps) {
    for (auto& sl : slot)
      for (auto& p : sl) MGK_CUDA_TRY(ctx, p.allocate(block));
    MGK_CUDA_TRY(ctx, cudaStreamCreateWithFlags(comm_stream.out(), cudaStreamNonBlocking));
    for (Event* e : {&start, &comm_done}) MGK_CUDA_TRY(ctx, cudaEventCreateWithFlags(e->out(), cudaEventDisableTiming));
    received = std::make_unique<Event[]>(size_t(steps));
    computed = std::make_unique<Event[]>(size_t(steps));
    for (auto* v : {&received, &computed})
      for (int t = 0; t < steps; ++t)
        MGK_CUDA_TRY(ctx, cudaEventCreateWithFlags((*v)[t].out(), cudaEventDisableTiming));
    return 0;
  }

  mgk::DeviceBuffer<__nv_bfloat16> slot[2][2];  // received blocks: slot[i][0] = K, slot[i][1] = V
  Stream comm_stream;
  Event start, comm_done;
  std::unique_ptr<Event[]> received, computed;  // per ring step
};

class Ring : private RingSlots {
 public:
  // Buffers, streams, events and the two cuDNN plans for a ring of W ranks.
  int setup(mgk_ctx* ctx, int64_t B_, int64_t S_, int64_t H_, int64_t D_, int W) {
    B = B_, S = S_, H = H_, D = D_;
    const int64_t block = B * S * H * D;
    if (setup_slots(ctx, block, W)) return 1;
    MGK_CUDA_TRY(ctx, blk_out.allocate(block));
    MGK_CUDA_TRY(ctx, acc.allocate(block));
    MGK_CUDA_TRY(ctx, blk_lse.allocate(B * H * S));
    MGK_CUDA_TRY(ctx, acc_lse.allocate(B * H * S));
    MGK_CUDNN_TRY(ctx, dnn.create());
    mgk::dnn::AttentionShape a;
    a.b = B, a.h = H, a.s_q = a.s_kv = S, a.d = D;
    a.q = a.k = a.v = a.o = mgk::dnn::bshd(H, S, D);
    a.scale = float(1.0 / std::sqrt(double(D)));
    a.causal = true;
    MGK_CUDNN_TRY(ctx, diagonal.plan(dnn, a));
    a.causal = false;
    MGK_CUDNN_TRY(ctx, earlier.plan(dnn, a));
    return 0;
  }

  // out = causal attention of q over the K, V of group ranks 0..r, on stream st.
  int run(mgk_ctx* ctx, ncclComm_t comm, int r, int W, const void* q, const void* k, const void* v,
          __nv_bfloat16* result, cudaStream_t st) {
    const size_t n = size_t(B * S * H * D);
    const int next = (r + 1) % W, prev = (r + W - 1) % W;
    // Step t (1 <= t < W) moves the block of rank r - t into slot t % 2 of rank r: rank r
    // receives at steps 1..r and forwards, at steps 1..r+1, what it received the step before
    // (its own K, V at step 1) unless r is the last rank.
    auto sends = [&](int t) { return r + 1 < W && t <= r + 1; };
    auto receives = [&](int t) { return t <= r; };
    auto comm_step = [&](int t) -> int {
      if (!sends(t) && !receives(t)) return 0;
      // Slot t % 2 last held step t-2's block: its attention must be done before it is overwritten.
      if (t >= 3 && t - 2 <= r) MGK_CUDA_TRY(ctx, cudaStreamWaitEvent(comm_stream, computed[t - 2]));
      const void* send_k = t == 1 ? k : slot[(t - 1) % 2][0];
      const void* send_v = t == 1 ? v : slot[(t - 1) % 2][1];
      MGK_RING_NCCL(ctx, comm, ncclGroupStart());
      if (sends(t)) {
        MGK_RING_NCCL(ctx, comm, ncclSend(send_k, n, ncclBfloat16, next, comm, comm_stream));
        MGK_RING_NCCL(ctx, comm, ncclSend(send_v, n, ncclBfloat16, next, comm, comm_stream));
      }
      if (receives(t)) {
        MGK_RING_NCCL(ctx, comm, ncclRecv(slot[t % 2][0], n, ncclBfloat16, prev, comm, comm_stream));
        MGK_RING_NCCL(ctx, comm, ncclRecv(slot[t % 2][1], n, ncclBfloat16, prev, comm, comm_stream));
      }
      MGK_RING_NCCL(ctx, comm, ncclGroupEnd());
      MGK_CUDA_TRY(ctx, cudaEventRecord(received[t], comm_stream));
      return 0;
    };

    MGK_CUDA_TRY(ctx, cudaEventRecord(start, st));
    MGK_CUDA_TRY(ctx, cudaStreamWaitEvent(comm_stream, start));
    if (W > 1 && comm_step(1)) return 1;
    MGK_CUDNN_TRY(ctx, diagonal.run(dnn, q, k, v, blk_out, blk_lse, st));
    if (merge(ctx, result, true, r == 0, st)) return 1;
    for (int t = 1; t < W; ++t) {
      if (t + 1 < W && comm_step(t + 1)) return 1;  // the next block moves while this one is used
      if (!receives(t)) continue;
      MGK_CUDA_TRY(ctx, cudaStreamWaitEvent(st, received[t]));
      MGK_CUDNN_TRY(ctx, earlier.run(dnn, q, slot[t % 2][0], slot[t % 2][1], blk_out, blk_lse, st));
      if (merge(ctx, result, false, t == r, st)) return 1;
      MGK_CUDA_TRY(ctx, cudaEventRecord(computed[t], st));
    }
    MGK_CUDA_TRY(ctx, cudaEventRecord(comm_done, comm_stream));
    MGK_CUDA_TRY(ctx, cudaStreamWaitEvent(st, comm_done));
    return 0;
  }

 private:
  int merge(mgk_ctx* ctx, __nv_bfloat16* out, bool first, bool last, cudaStream_t st) {
    const int64_t warps = B * S * H;
    const int grid = int(std::min<int64_t>((warps * 32 + 255) / 256, 132 * 16));
    merge_kernel<<<grid, 256, 0, st>>>(blk_out, blk_lse, acc, acc_lse, out, B, S, H, D, first, last);
    MGK_LAUNCH_CHECK(ctx);
    return 0;
  }

  int64_t B = 0, S = 0, H = 0, D = 0;
  mgk::dnn::Handle dnn;
  mgk::dnn::Attention diagonal, earlier;   // causal S x S; unmasked S x S
  mgk::DeviceBuffer<__nv_bfloat16> blk_out;  // [B, S, H, D], one block's O
  mgk::DeviceBuffer<float> blk_lse;          // [B, H, S]: cuDNN's stats layout
  mgk::DeviceBuffer<float> acc;              // [B, S, H, D]
  mgk::DeviceBuffer<float> acc_lse;          // [B, H, S]
};

// One warp per output row (b, i, h) of group rank `rank`, lanes over D (D <= 128): the exact
// causal softmax attention of query position g = rank S + i over keys 0..g, in fp64, from q
// (this rank's, [B, S, H, D]) and the whole sequence's K, V ([B, T, H, D]).
// scale (per element c) = |o| + sum over rank blocks of |sum_{j in block} p_j v_jc|
//   + min(sum_j p_j |v_jc|, 4 sqrt(sum_j p_j^2 v_jc^2))
//   + (A_T + 2 A_D max_j scale |q|.|k_j|) sum_j p_j |v_jc|
// (see attention/ring_attention's statement for where each term comes from). When q, k and v
// are themselves bf16 roundings of exact values (ring_attention_tp), qm, km, vm give the
// magnitude each element's error scales with (units of u) and two terms are added:
//   + sum_j p_j vm_jc                                   (V's errors, carried by the weights)
//   + sum_j p_j |v_jc - o_c| 2 scale (qm . km_j)        (q's, k's errors through the scores:
//     d o_c / d s_j = p_j (v_jc - o_c), |δs_j| <= scale (qm.|k_j| + |q|.km_j) <= 2 scale qm.km_j).
// qm == nullptr: none (inputs exact, ring_attention). (ring_attention_pp carries errors through
// two stages and has its own oracle, in its reference.)
__global__ void attention_oracle(const double* q, const double* k, const double* v, const double* qm,
                                 const double* km, const double* vm, double* expected, float* scale, int rank,
                                 int64_t B, int64_t S, int64_t T, int64_t H, int64_t D) {
  constexpr int kCols = 4;  // D <= 128 = 4 x 32 lanes
  const int64_t rows = B * S * H, lane = threadIdx.x % 32;
  const double sm_scale = 1.0 / sqrt(double(D));
  const double acc_t = mgk::oracle::fp32_accumulation(T), acc_d = mgk::oracle::fp32_accumulation(D);
  const bool inexact = qm != nullptr;
  for (int64_t row = (blockIdx.x * int64_t(blockDim.x) + threadIdx.x) / 32; row < rows;
       row += int64_t(gridDim.x) * blockDim.x / 32) {
    const int64_t h = row % H, i = (row / H) % S, b = row / (H * S), g = rank * S + i;
    double qc[kCols], qmc[kCols];
    for (int t = 0; t < kCols; ++t) {
      const bool in = lane + 32 * t < D;
      qc[t] = in ? q[row * D + lane + 32 * t] : 0.0;
      qmc[t] = in && inexact ? qm[row * D + lane + 32 * t] : 0.0;
    }
    auto key = [&](int64_t j) { return ((b * T + j) * H + h) * D; };
    auto reduce = [&](double x) {
      for (int off = 16; off; off /= 2) x += __shfl_xor_sync(0xffffffffu, x, off);
      return x;
    };
    // Pass 1: the row's max score, normaliser and largest |q|.|k_j|.
    double m = -INFINITY, z = 0, mag_max = 0;
    for (int64_t j = 0; j <= g; ++j) {
      double dot = 0, mag = 0;
      for (int t = 0; t < kCols; ++t)
        if (lane + 32 * t < D) {
          const double kv = k[key(j) + lane + 32 * t];
          dot += qc[t] * kv;
          mag += fabs(qc[t] * kv);
        }
      dot = reduce(dot);
      mag = reduce(mag);
      const double x = dot * sm_scale, m2 = fmax(m, x);
      z = z * exp(m - m2) + exp(x - m2);
      m = m2;
      mag_max = fmax(mag_max, mag * sm_scale);
    }
    // Pass 2: o and the magnitudes, per column.
    double o[kCols] = {}, pv[kCols] = {}, pv2[kCols] = {}, part[kCols] = {}, blocks[kCols] = {};
    for (int64_t j = 0; j <= g; ++j) {
      double dot = 0;
      for (int t = 0; t < kCols; ++t)
        if (lane + 32 * t < D) dot += qc[t] * k[key(j) + lane + 32 * t];
      dot = reduce(dot);
      const double p = exp(dot * sm_scale - m) / z;
      const bool block_end = j == g || j % S == S - 1;
      for (int t = 0; t < kCols; ++t) {
        const double vj = lane + 32 * t < D ? v[key(j) + lane + 32 * t] : 0.0;
        o[t] += p * vj;
        pv[t] += p * fabs(vj);
        pv2[t] += p * p * vj * vj;
        part[t] += p * vj;
        if (block_end) {
          blocks[t] += fabs(part[t]);
          part[t] = 0;
        }
      }
    }
    // Pass 3 (inexact inputs only): the input-rounding terms, which need o. v's errors are
    // carried by the weights. q's and k's move score j by at most d_j = 2 u scale qm.km_j,
    // and then o by at most sum_j p_j expm1(d_j) |v_j - o| / sum_j p_j e^-d_j (exact for any
    // d: o' - o = sum_j p_j (e^delta_j - 1) (v_j - o) / sum_j p_j e^delta_j), never more than
    // the spread of the values about o (o' is a mean of them). For small d it is the first
    // order p_j d_j |v_j - o|; a row split between a key with massive activations, whose d
    // is of order one, and the others is ill-conditioned, and only the spread bounds it.
    double carried[kCols] = {}, moved[kCols] = {}, spread[kCols] = {}, kept = 0;
    if (inexact) {
      for (int64_t j = 0; j <= g; ++j) {
        double dot = 0, qk = 0;
        for (int t = 0; t < kCols; ++t)
          if (lane + 32 * t < D) {
            dot += qc[t] * k[key(j) + lane + 32 * t];
            qk += qmc[t] * km[key(j) + lane + 32 * t];
          }
        dot = reduce(dot);
        qk = reduce(qk);
        const double p = exp(dot * sm_scale - m) / z, d = mgk::oracle::kBf16U * 2.0 * sm_scale * qk;
        if (p > 0) kept += p * exp(-d);
        for (int t = 0; t < kCols; ++t)
          if (lane + 32 * t < D) {
            const int64_t at = key(j) + lane + 32 * t;
            carried[t] += p * vm[at];
            if (p > 0) moved[t] += p * expm1(d) * fabs(v[at] - o[t]);
            spread[t] = fmax(spread[t], fabs(v[at] - o[t]));
          }
      }
      for (int t = 0; t < kCols; ++t)
        carried[t] += (kept > 0 ? fmin(moved[t] / kept, spread[t]) : spread[t]) / mgk::oracle::kBf16U;
    }
    for (int t = 0; t < kCols; ++t) {
      if (lane + 32 * t >= D) continue;
      const int64_t e = row * D + lane + 32 * t;
      expected[e] = o[t];
      scale[e] = float(fabs(o[t]) + blocks[t] + fmin(pv[t], 4.0 * sqrt(pv2[t])) +
                       (acc_t + 2.0 * acc_d * mag_max) * pv[t] + carried[t]);
    }
  }
}

inline cudaError_t launch_attention_oracle(const double* q, const double* k, const double* v, const double* qm,
                                           const double* km, const double* vm, double* expected, float* scale,
                                           int rank, int64_t B, int64_t S, int64_t T, int64_t H, int64_t D,
                                           cudaStream_t st) {
  const int64_t warps = B * S * H;
  const int grid = int(std::min<int64_t>((warps * 32 + 127) / 128, 132 * 64));
  attention_oracle<<<grid, 128, 0, st>>>(q, k, v, qm, km, vm, expected, scale, rank, B, S, T, H, D);
  return cudaGetLastError();
}

}  // namespace ring
