// Reference: ParallelKernelBench's ring attention. Rank r holds positions [r S, (r+1) S) of
// the sequence; K and V travel the ring (NCCL send/recv to r+1, from r-1) while cuDNN's fused
// attention runs on the block in hand: the causal diagonal block first (rank r's own keys),
// then the blocks of ranks r-1, r-2, ..., 0 unmasked, each giving (O_blk bf16, lse_blk fp32)
// that a small kernel merges into fp32 accumulators by the log-sum-exp rule; the last merge
// writes bf16. Causality means rank r needs only the r blocks before it, so the ring carries
// no block past the last rank that uses it (PKB sends every block all the way round, unused);
// the next block's transfer runs on a second stream while the current block is computed.
#include <vector>

#include "mgk/cudnn_attention.h"
#include "mgk/oracle_gemm.cuh"
#include "mgk/reference.h"

namespace {

struct State {
  mgk::dnn::Handle dnn;
  mgk::dnn::Attention diagonal, earlier;  // causal S x S; unmasked S x S
  void* slot[2][2] = {};                  // received blocks: slot[i][0] = K, slot[i][1] = V
  void* blk_out = nullptr;                // [B, S, H, D] bf16, one block's O
  float* blk_lse = nullptr;               // [B, H, S]: cuDNN's stats layout
  float* acc = nullptr;                   // [B, S, H, D] fp32
  float* acc_lse = nullptr;               // [B, H, S]
  cudaStream_t comm_stream = nullptr;
  cudaEvent_t start = nullptr, comm_done = nullptr;
  std::vector<cudaEvent_t> received, computed;  // per ring step
  ~State() {
    for (auto& s : slot)
      for (void* p : s) cudaFree(p);
    cudaFree(blk_out);
    cudaFree(blk_lse);
    cudaFree(acc);
    cudaFree(acc_lse);
    for (auto* v : {&received, &computed})
      for (cudaEvent_t e : *v) cudaEventDestroy(e);
    if (start) cudaEventDestroy(start);
    if (comm_done) cudaEventDestroy(comm_done);
    if (comm_stream) cudaStreamDestroy(comm_stream);
  }
};

State& state(mgk_ctx* ctx) { return *static_cast<State*>(ctx->state); }

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

int merge(mgk_ctx* ctx, State& s, __nv_bfloat16* out, bool first, bool last, cudaStream_t st) {
  const int64_t B = mgk::dim(ctx, "B"), S = mgk::dim(ctx, "S"), H = mgk::dim(ctx, "H"), D = mgk::dim(ctx, "D");
  const int64_t warps = B * S * H;
  const int grid = int(std::min<int64_t>((warps * 32 + 255) / 256, 132 * 16));
  merge_kernel<<<grid, 256, 0, st>>>(static_cast<const __nv_bfloat16*>(s.blk_out), s.blk_lse, s.acc, s.acc_lse, out,
                                     B, S, H, D, first, last);
  MGK_LAUNCH_CHECK(ctx);
  return 0;
}

}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  auto* s = new State;
  ctx->state = s;
  const int64_t B = mgk::dim(ctx, "B"), S = mgk::dim(ctx, "S"), H = mgk::dim(ctx, "H"), D = mgk::dim(ctx, "D");
  const size_t block = size_t(B * S * H * D);
  for (auto& sl : s->slot)
    for (void*& p : sl) MGK_CUDA_TRY(ctx, cudaMalloc(&p, block * 2));
  MGK_CUDA_TRY(ctx, cudaMalloc(&s->blk_out, block * 2));
  MGK_CUDA_TRY(ctx, cudaMalloc(&s->acc, block * 4));
  MGK_CUDA_TRY(ctx, cudaMalloc(&s->blk_lse, size_t(B * H * S) * 4));
  MGK_CUDA_TRY(ctx, cudaMalloc(&s->acc_lse, size_t(B * H * S) * 4));
  MGK_CUDA_TRY(ctx, cudaStreamCreateWithFlags(&s->comm_stream, cudaStreamNonBlocking));
  for (cudaEvent_t* e : {&s->start, &s->comm_done}) MGK_CUDA_TRY(ctx, cudaEventCreateWithFlags(e, cudaEventDisableTiming));
  s->received.resize(size_t(ctx->world_size));
  s->computed.resize(size_t(ctx->world_size));
  for (auto* v : {&s->received, &s->computed})
    for (cudaEvent_t& e : *v) MGK_CUDA_TRY(ctx, cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  MGK_CUDNN_TRY(ctx, s->dnn.create());
  mgk::dnn::AttentionShape a;
  a.b = B, a.h = H, a.s_q = a.s_kv = S, a.d = D;
  a.q = a.k = a.v = a.o = mgk::dnn::bshd(H, S, D);
  a.scale = float(1.0 / std::sqrt(double(D)));
  a.causal = true;
  MGK_CUDNN_TRY(ctx, s->diagonal.plan(s->dnn, a));
  a.causal = false;
  MGK_CUDNN_TRY(ctx, s->earlier.plan(s->dnn, a));
  return 0;
}

MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { delete &state(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t st) {
  State& s = state(ctx);
  const int r = ctx->rank, W = ctx->world_size;
  const size_t n = size_t(in[0].numel);
  const int next = (r + 1) % W, prev = (r + W - 1) % W;
  auto* result = static_cast<__nv_bfloat16*>(out[0].data);
  // Step t (1 <= t < W) moves the block of rank r - t into slot t % 2 of rank r: rank r
  // receives at steps 1..r and forwards, at steps 1..r+1, what it received the step before
  // (its own K, V at step 1) unless r is the last rank.
  auto sends = [&](int t) { return r + 1 < W && t <= r + 1; };
  auto receives = [&](int t) { return t <= r; };
  auto comm_step = [&](int t) -> int {
    if (!sends(t) && !receives(t)) return 0;
    // Slot t % 2 last held step t-2's block: its attention must be done before it is overwritten.
    if (t >= 3 && t - 2 <= r) MGK_CUDA_TRY(ctx, cudaStreamWaitEvent(s.comm_stream, s.computed[t - 2]));
    const void* send_k = t == 1 ? in[1].data : s.slot[(t - 1) % 2][0];
    const void* send_v = t == 1 ? in[2].data : s.slot[(t - 1) % 2][1];
    MGK_NCCL_STEP(ctx, ncclGroupStart());
    if (sends(t)) {
      MGK_NCCL_STEP(ctx, ncclSend(send_k, n, ncclBfloat16, next, mgk::comm(ctx), s.comm_stream));
      MGK_NCCL_STEP(ctx, ncclSend(send_v, n, ncclBfloat16, next, mgk::comm(ctx), s.comm_stream));
    }
    if (receives(t)) {
      MGK_NCCL_STEP(ctx, ncclRecv(s.slot[t % 2][0], n, ncclBfloat16, prev, mgk::comm(ctx), s.comm_stream));
      MGK_NCCL_STEP(ctx, ncclRecv(s.slot[t % 2][1], n, ncclBfloat16, prev, mgk::comm(ctx), s.comm_stream));
    }
    MGK_NCCL_STEP(ctx, ncclGroupEnd());
    MGK_CUDA_TRY(ctx, cudaEventRecord(s.received[t], s.comm_stream));
    return 0;
  };

  MGK_CUDA_TRY(ctx, cudaEventRecord(s.start, st));
  MGK_CUDA_TRY(ctx, cudaStreamWaitEvent(s.comm_stream, s.start));
  if (W > 1 && comm_step(1)) return 1;
  MGK_CUDNN_TRY(ctx, s.diagonal.run(s.dnn, in[0].data, in[1].data, in[2].data, s.blk_out, s.blk_lse, st));
  if (merge(ctx, s, result, true, r == 0, st)) return 1;
  for (int t = 1; t < W; ++t) {
    if (t + 1 < W && comm_step(t + 1)) return 1;  // the next block moves while this one is used
    if (!receives(t)) continue;
    MGK_CUDA_TRY(ctx, cudaStreamWaitEvent(st, s.received[t]));
    MGK_CUDNN_TRY(ctx, s.earlier.run(s.dnn, in[0].data, s.slot[t % 2][0], s.slot[t % 2][1], s.blk_out, s.blk_lse, st));
    if (merge(ctx, s, result, false, t == r, st)) return 1;
    MGK_CUDA_TRY(ctx, cudaEventRecord(s.computed[t], st));
  }
  MGK_CUDA_TRY(ctx, cudaEventRecord(s.comm_done, s.comm_stream));
  MGK_CUDA_TRY(ctx, cudaStreamWaitEvent(st, s.comm_done));
  return 0;
}

namespace {

// One warp per output row (b, i, h) of rank `rank`, lanes over D (D <= 128): the exact causal
// softmax attention of query position g = rank S + i over keys 0..g, in fp64, from the
// regenerated q (this rank's, [B, S, H, D]) and the whole sequence's K, V ([B, T, H, D]).
// scale (per element c) = |o| + sum over rank blocks of |sum_{j in block} p_j v_jc|
//   + min(sum_j p_j |v_jc|, 4 sqrt(sum_j p_j^2 v_jc^2))
//   + (A_T + 2 A_D max_j scale |q|.|k_j|) sum_j p_j |v_jc|
// (see the statement for where each term comes from).
__global__ void attention_oracle(const double* q, const double* k, const double* v, double* expected, float* scale,
                                 int rank, int64_t B, int64_t S, int64_t T, int64_t H, int64_t D) {
  constexpr int kCols = 4;  // D <= 128 = 4 x 32 lanes
  const int64_t rows = B * S * H, lane = threadIdx.x % 32;
  const double sm_scale = 1.0 / sqrt(double(D));
  const double acc_t = mgk::oracle::fp32_accumulation(T), acc_d = mgk::oracle::fp32_accumulation(D);
  for (int64_t row = (blockIdx.x * int64_t(blockDim.x) + threadIdx.x) / 32; row < rows;
       row += int64_t(gridDim.x) * blockDim.x / 32) {
    const int64_t h = row % H, i = (row / H) % S, b = row / (H * S), g = rank * S + i;
    double qc[kCols];
    for (int t = 0; t < kCols; ++t) qc[t] = lane + 32 * t < D ? q[row * D + lane + 32 * t] : 0.0;
    auto key = [&](int64_t j) { return ((b * T + j) * H + h) * D; };
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
      for (int off = 16; off; off /= 2) {
        dot += __shfl_xor_sync(0xffffffffu, dot, off);
        mag += __shfl_xor_sync(0xffffffffu, mag, off);
      }
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
      for (int off = 16; off; off /= 2) dot += __shfl_xor_sync(0xffffffffu, dot, off);
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
    for (int t = 0; t < kCols; ++t) {
      if (lane + 32 * t >= D) continue;
      const int64_t e = row * D + lane + 32 * t;
      expected[e] = o[t];
      scale[e] = float(fabs(o[t]) + blocks[t] + fmin(pv[t], 4.0 * sqrt(pv2[t])) +
                       (acc_t + 2.0 * acc_d * mag_max) * pv[t]);
    }
  }
}

}  // namespace

MGK_EXPORT int mgk_oracle(mgk_ctx* ctx, const mgk_oracle_args* a, cudaStream_t st) {
  namespace o = mgk::oracle;
  const int64_t B = mgk::dim(ctx, "B"), S = mgk::dim(ctx, "S"), T = mgk::dim(ctx, "T"), H = mgk::dim(ctx, "H"),
                D = mgk::dim(ctx, "D");
  if (D > 128) return mgk::set_error(ctx, "oracle: D = %lld > 128", (long long)D);
  o::Scratch scratch(st);
  double *q = scratch.get<double>(B * S * H * D), *k = scratch.get<double>(B * T * H * D),
         *v = scratch.get<double>(B * T * H * D);
  if (!scratch.ok()) return mgk::set_error(ctx, "oracle: out of device memory");
  const mgk_input_gen gq = a->gens[0], gk = a->gens[1], gv = a->gens[2];
  const int rank = ctx->rank;
  // K and V of the whole sequence: position j is rank j / S's position j % S.
  MGK_CUDA_TRY(ctx, o::for_each(
                        B * T * H * D,
                        [=] __device__(int64_t e) {
                          const int64_t c = e % D, h = (e / D) % H, j = (e / (D * H)) % T, b = e / (D * H * T);
                          const int64_t local = ((b * S + j % S) * H + h) * D + c;
                          k[e] = mgk::gen_value(gk, int(j / S), local);
                          v[e] = mgk::gen_value(gv, int(j / S), local);
                          if (j / S == rank) q[local] = mgk::gen_value(gq, rank, local);
                        },
                        st));
  const int64_t warps = B * S * H;
  const int grid = int(std::min<int64_t>((warps * 32 + 127) / 128, 132 * 64));
  attention_oracle<<<grid, 128, 0, st>>>(q, k, v, static_cast<double*>(a->expected[0]), a->scale[0], rank, B, S, T,
                                         H, D);
  MGK_LAUNCH_CHECK(ctx);
  return 0;
}
