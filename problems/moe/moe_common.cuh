// Shared by the references of the expert-parallel MoE forwards (moe/fused_moe_fwd,
// moe_ep_balanced, moe_ep_wide, moe_ep_narrow; fused_moe_fwd_lora swaps the MLP): what
// ParallelKernelBench's torch code does, at library speed.
//
//   router   cuBLASLt x . gate_weight^T (fp32), + bias rounded once to bf16 (PyTorch's
//            fused bias epilogue), softmax in fp32 rounded to bf16, top-K on the bf16
//            probabilities, ties to the lower expert index (one thread a token).
//   permute  CUB stable radix sort of the M*K (token, slot) pairs by expert: expert-major,
//            tokens ascending within an expert (PKB's masked_select over the routing map).
//   counts   NCCL all-gather of the per-expert counts over the EP group (grouped
//            send/recv when the group is a subgroup), copied to the host: the split sizes.
//   dispatch ncclSend/ncclRecv in one group (NCCL's all_to_all_v), rows to the owner
//            base + e / EL of expert e.
//   MLP      every local expert shares the rank's one MLP, so one GEMM over all received
//            rows: [gate; up] in one cuBLASLt GEMM (fp32), bias + bf16 rounding, SiLU and
//            the product rounded to bf16 as PyTorch does, then the down projection with
//            its bias folded into the GEMM as an extra K column (one rounding, like the
//            epilogue). PKB's reorder to (local expert, source) and back only permutes rows
//            of a row-wise computation, so it is left out.
//   combine  the reverse send/recv, then out[t] = bf16(sum_k bf16(p_tk * y_tk)).
//
// The fp64 oracle (moe::oracle) follows the definition instead: out[t] = sum over the
// token's top-K experts e of p_te * MLP_owner(e)(x_t), every owner's MLP applied to all of
// this rank's tokens, no dispatch.
#pragma once
#include <cub/cub.cuh>

#include <map>
#include <memory>
#include <vector>

#include "mgk/lt_gemm.h"
#include "mgk/reference_kit.h"

namespace moe {

using bf16 = __nv_bfloat16;

// The EP group of this rank is ranks [base, base + G); expert e (of E) lives on group
// member e / EL, i.e. on global rank base + e / EL.
struct Dims {
  int64_t M, N, I, E, G, EL, K;
  int base = 0, me = 0;
  int owner(int64_t e) const { return base + int(e / EL); }
  // The most rows one rank can receive: every group member's every token, once per local
  // expert it picked.
  int64_t capacity() const { return G * M * std::min(K, EL); }
  // These dims with base and me of global rank `rank`.
  Dims of_rank(int rank) const {
    Dims d = *this;
    d.base = int(rank / G * G);
    d.me = rank - d.base;
    return d;
  }
};

// GEMM row counts are rounded up to one of four steps an octave (at most 25% padding), so
// that the variable per-call row count needs only a few cuBLASLt plans.
inline int64_t bucket(int64_t rows) {
  if (rows <= 64) return 64;
  int lg = 63 - __builtin_clzll(uint64_t(rows));
  const int64_t step = int64_t(1) << (lg - 2);
  return (rows + step - 1) / step * step;
}

inline int grid(int64_t n) { return int(std::min<int64_t>((n + 255) / 256, 132 * 16)); }

__device__ inline float round_bf16(float v) { return __bfloat162float(__float2bfloat16_rn(v)); }

// One thread a token: logits bf16(acc + bias), softmax in fp32, top-K of the bf16
// probabilities (strictly greater wins, so ties go to the lower index).
__global__ void route_kernel(const float* acc, const bf16* bias, int64_t M, int E, int K, int* sel,
                             bf16* prob) {
  for (int64_t t = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; t < M; t += int64_t(gridDim.x) * blockDim.x) {
    const float* row = acc + t * E;
    auto logit = [&](int e) { return round_bf16(row[e] + __bfloat162float(bias[e])); };
    float mx = -INFINITY;
    for (int e = 0; e < E; ++e) mx = fmaxf(mx, logit(e));
    float sum = 0;
    for (int e = 0; e < E; ++e) sum += expf(logit(e) - mx);
    int chosen[2] = {-1, -1};
    for (int j = 0; j < K; ++j) {
      int best = -1;
      float bp = -1;
      for (int e = 0; e < E; ++e) {
        if (e == chosen[0] || e == chosen[1]) continue;
        const float p = round_bf16(expf(logit(e) - mx) / sum);
        if (p > bp) bp = p, best = e;
      }
      chosen[j] = best;
      sel[t * K + j] = best;
      prob[t * K + j] = __float2bfloat16_rn(bp);
    }
  }
}

// counts[e] = how many of the n sorted keys equal e (binary search; E threads).
__global__ void count_kernel(const int* sorted, int64_t n, int E, int* counts) {
  const int e = blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= E) return;
  auto lower = [&](int key) {
    int64_t lo = 0, hi = n;
    while (lo < hi) {
      const int64_t mid = (lo + hi) / 2;
      if (sorted[mid] < key) lo = mid + 1; else hi = mid;
    }
    return lo;
  };
  counts[e] = int(lower(e + 1) - lower(e));
}

__global__ void iota_kernel(int* v, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    v[i] = int(i);
}

// dst row i = src row perm[i] / K, and pos[perm[i]] = i (where slot perm[i] went), rows of
// `vecs` vectors V.
template <class V>
__global__ void permute_kernel(const V* src, const int* perm, int64_t n, int K, int64_t vecs, V* dst, int* pos) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n * vecs; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t row = i / vecs, v = i % vecs;
    const int slot = perm[row];
    dst[i] = src[int64_t(slot / K) * vecs + v];
    if (v == 0) pos[slot] = int(row);
  }
}

inline cudaError_t permute_rows(const void* x, const int* perm, int64_t n, int K, int64_t N, void* dst, int* pos,
                                cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  const int64_t bytes = N * 2;
  if (bytes % 16 == 0)
    permute_kernel<<<grid(n * bytes / 16), 256, 0, s>>>(static_cast<const uint4*>(x), perm, n, K, bytes / 16,
                                                        static_cast<uint4*>(dst), pos);
  else if (bytes % 8 == 0)
    permute_kernel<<<grid(n * bytes / 8), 256, 0, s>>>(static_cast<const uint2*>(x), perm, n, K, bytes / 8,
                                                       static_cast<uint2*>(dst), pos);
  else if (bytes % 4 == 0)
    permute_kernel<<<grid(n * bytes / 4), 256, 0, s>>>(static_cast<const uint32_t*>(x), perm, n, K, bytes / 4,
                                                       static_cast<uint32_t*>(dst), pos);
  else
    permute_kernel<<<grid(n * N), 256, 0, s>>>(static_cast<const uint16_t*>(x), perm, n, K, N,
                                               static_cast<uint16_t*>(dst), pos);
  return cudaGetLastError();
}

// Wd' [N x KP] = [Wd | bd | 0]: the down projection with its bias as column I, multiplied
// by the activations' column of ones.
__global__ void fold_bias_kernel(const bf16* w, const bf16* b, int64_t N, int64_t I, int64_t KP, bf16* out) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < N * KP; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t n = i / KP, c = i % KP;
    out[i] = c < I ? w[n * I + c] : (c == I ? b[n] : __float2bfloat16_rn(0.0f));
  }
}

// a' [rows x KP]: a = bf16(bf16(silu(g)) * u), g = bf16(G + bg), u = bf16(U + bu) from the
// fp32 [G | U] GEMM output (rows x 2I); column I is 1, the rest 0.
__global__ void activation_kernel(const float* gu, const bf16* bg, const bf16* bu, int64_t rows, int64_t I,
                                  int64_t KP, bf16* out) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < rows * KP; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = i / KP, c = i % KP;
    float v = c == I ? 1.0f : 0.0f;
    if (c < I) {
      const float g = round_bf16(gu[r * 2 * I + c] + __bfloat162float(bg[c]));
      const float u = round_bf16(gu[r * 2 * I + I + c] + __bfloat162float(bu[c]));
      v = round_bf16(g / (1.0f + expf(-g))) * u;
    }
    out[i] = __float2bfloat16_rn(v);
  }
}

// out[t] = bf16(sum over slots j of bf16(p_tj * back[pos[t K + j]])), the products rounded
// as PyTorch's bf16 multiply, the sum as its scatter-add into zeros.
__global__ void combine_kernel(const bf16* back, const int* pos, const bf16* prob, int64_t M, int64_t N, int K,
                               bf16* out) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < M * N; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t t = i / N, n = i % N;
    float acc = 0;
    for (int j = 0; j < K; ++j) {
      const float c = round_bf16(__bfloat162float(prob[t * K + j]) * __bfloat162float(back[pos[t * K + j] * N + n]));
      acc = j ? round_bf16(acc + c) : c;
    }
    out[i] = __float2bfloat16_rn(acc);
  }
}

// The split sizes of one call, from the gathered counts [G x E] (host).
struct Splits {
  std::vector<int64_t> send, send_off, recv, recv_off;
  int64_t received = 0;
};

inline Splits splits(const Dims& d, const int* gathered) {
  Splits s;
  s.send.assign(d.G, 0);
  s.recv.assign(d.G, 0);
  const int* mine = gathered + d.me * d.E;
  for (int64_t q = 0; q < d.G; ++q)
    for (int64_t l = 0; l < d.EL; ++l) {
      s.send[q] += mine[q * d.EL + l];
      s.recv[q] += gathered[q * d.E + d.me * d.EL + l];
    }
  int64_t so = 0, ro = 0;
  for (int64_t q = 0; q < d.G; ++q) {
    s.send_off.push_back(so);
    s.recv_off.push_back(ro);
    so += s.send[q];
    ro += s.recv[q];
  }
  s.received = ro;
  return s;
}

// Rows `rows[q]` at `src + offs[q]` go to group member q, and `recv_rows[q]` from it land at
// `dst + recv_offs[q]` (rows of N bf16): an all-to-all-v as one NCCL group.
inline int exchange(mgk_ctx* ctx, const Dims& d, const bf16* src, const std::vector<int64_t>& rows,
                    const std::vector<int64_t>& offs, bf16* dst, const std::vector<int64_t>& recv_rows,
                    const std::vector<int64_t>& recv_offs, cudaStream_t st) {
  MGK_NCCL_STEP(ctx, ncclGroupStart());
  for (int64_t q = 0; q < d.G; ++q) {
    if (rows[q]) MGK_NCCL_STEP(ctx, ncclSend(src + offs[q] * d.N, rows[q] * d.N, ncclBfloat16, d.base + int(q), mgk::comm(ctx), st));
    if (recv_rows[q])
      MGK_NCCL_STEP(ctx, ncclRecv(dst + recv_offs[q] * d.N, recv_rows[q] * d.N, ncclBfloat16, d.base + int(q), mgk::comm(ctx), st));
  }
  MGK_NCCL_STEP(ctx, ncclGroupEnd());
  return 0;
}

// Everything but the expert MLP: buffers, router, permutation, counts, the two exchanges. The
// family's reference (moe_reference.cuh) derives from it and adds the MLP.
struct Path : mgk::Reference {
  using Reference::Reference;
  const Dims d = Dims{dim("M"), dim("N"), dim("I"), dim("E"), dim("G"), dim("EL"), dim("K")}.of_rank(rank());
  mgk::lt::Handle lt;
  mgk::lt::Gemm router;
  mgk::DeviceBuffer<float> logits;                      // M x E
  mgk::DeviceBuffer<int> sel, sorted, iota, perm, pos;  // M*K each
  mgk::DeviceBuffer<bf16> prob;                         // M*K
  mgk::DeviceBuffer<int> counts;  // G x E: row `me` is this rank's, the rest gathered
  std::unique_ptr<int, decltype(&cudaFreeHost)> host_counts{nullptr, cudaFreeHost};  // pinned copy
  mgk::DeviceBuffer<char> sort_temp;
  size_t sort_bytes = 0;
  int end_bit = 1;
  mgk::DeviceBuffer<bf16> send, recv, y, back;  // send/back M*K rows, recv/y capacity rows

  int setup() {
    const int64_t n = d.M * d.K, cap = bucket(d.capacity());
    MGK_CUDA_TRY(ctx, logits.allocate(d.M * d.E));
    for (mgk::DeviceBuffer<int>* p : {&sel, &sorted, &iota, &perm, &pos}) MGK_CUDA_TRY(ctx, p->allocate(n));
    MGK_CUDA_TRY(ctx, prob.allocate(n));
    MGK_CUDA_TRY(ctx, counts.allocate(d.G * d.E));
    int* pinned = nullptr;
    MGK_CUDA_TRY(ctx, cudaMallocHost(&pinned, size_t(d.G * d.E) * 4));
    host_counts.reset(pinned);
    MGK_CUDA_TRY(ctx, send.allocate(n * d.N));
    MGK_CUDA_TRY(ctx, back.allocate(n * d.N));
    MGK_CUDA_TRY(ctx, recv.allocate(cap * d.N));
    MGK_CUDA_TRY(ctx, y.allocate(cap * d.N));
    while ((int64_t(1) << end_bit) < d.E) ++end_bit;
    MGK_CUDA_TRY(ctx, cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, sel.get(), sorted.get(), iota.get(),
                                                      perm.get(), int(n), 0, end_bit));
    MGK_CUDA_TRY(ctx, sort_temp.allocate(int64_t(std::max<size_t>(sort_bytes, 16))));
    iota_kernel<<<grid(n), 256>>>(iota, n);
    MGK_LAUNCH_CHECK(ctx);
    MGK_CUDA_TRY(ctx, cudaDeviceSynchronize());
    MGK_CUBLAS_TRY(ctx, lt.create());
    mgk::lt::GemmShape r{d.M, d.E, d.N};
    r.trans_b = true;
    r.d_type = CUDA_R_32F;
    MGK_CUBLAS_TRY(ctx, router.plan(lt, r, size_t(4) << 20));
    return 0;
  }

  // Router, permutation and counts exchange; `s` gets the splits. x: M x N, gate_weight
  // E x N, gate_bias E.
  int route_and_dispatch(const mgk_tensor* in, Splits& s, cudaStream_t st) {
    const int64_t n = d.M * d.K;
    MGK_CUBLAS_TRY(ctx, router.run(in[0].data, in[1].data, logits, st));
    route_kernel<<<grid(d.M), 256, 0, st>>>(logits, static_cast<const bf16*>(in[2].data), d.M, int(d.E), int(d.K),
                                            sel, prob);
    MGK_LAUNCH_CHECK(ctx);
    MGK_CUDA_TRY(ctx, cub::DeviceRadixSort::SortPairs(sort_temp.get(), sort_bytes, sel.get(), sorted.get(), iota.get(),
                                                      perm.get(), int(n), 0, end_bit, st));
    int* mine = counts + d.me * d.E;
    count_kernel<<<int((d.E + 127) / 128), 128, 0, st>>>(sorted, n, int(d.E), mine);
    MGK_LAUNCH_CHECK(ctx);
    MGK_CUDA_TRY(ctx, permute_rows(in[0].data, perm, n, int(d.K), d.N, send, pos, st));
    if (!comm()) {
      // Compute-only timing (no communicator): every member as if it routed like this rank.
      for (int64_t q = 0; q < d.G; ++q)
        if (q != d.me)
          MGK_CUDA_TRY(ctx, cudaMemcpyAsync(counts + q * d.E, mine, size_t(d.E) * 4, cudaMemcpyDeviceToDevice, st));
    } else if (d.G == world()) {
      MGK_NCCL_TRY(ctx, ncclAllGather(mine, counts, size_t(d.E), ncclInt32, comm(), st));
    } else {
      // A subgroup: the all-gather as grouped send/recv among its members.
      MGK_NCCL_TRY(ctx, ncclGroupStart());
      for (int64_t q = 0; q < d.G; ++q) {
        if (q == d.me) continue;  // this rank's row is already in place
        MGK_NCCL_TRY(ctx, ncclSend(mine, size_t(d.E), ncclInt32, d.base + int(q), comm(), st));
        MGK_NCCL_TRY(ctx, ncclRecv(counts + q * d.E, size_t(d.E), ncclInt32, d.base + int(q), comm(), st));
      }
      MGK_NCCL_TRY(ctx, ncclGroupEnd());
    }
    MGK_CUDA_TRY(ctx, cudaMemcpyAsync(host_counts.get(), counts, size_t(d.G * d.E) * 4, cudaMemcpyDeviceToHost, st));
    MGK_CUDA_TRY(ctx, cudaStreamSynchronize(st));  // the split sizes are host arguments of NCCL
    s = splits(d, host_counts.get());
    return exchange(ctx, d, send, s.send, s.send_off, recv, s.recv, s.recv_off, st);
  }

  // y (the MLP's output rows, in the order received) back to their tokens, weighted.
  int combine(const Splits& s, void* out, cudaStream_t st) {
    if (exchange(ctx, d, y, s.recv, s.recv_off, back, s.send, s.send_off, st)) return 1;
    combine_kernel<<<grid(d.M * d.N), 256, 0, st>>>(back, pos, prob, d.M, d.N, int(d.K), static_cast<bf16*>(out));
    MGK_LAUNCH_CHECK(ctx);
    return 0;
  }
};

// The cuBLASLt plans of each bucketed row count, made on first use by `make` (which plans the
// GEMMs of one Plans in turn and returns the first failure) and kept; a failed set is not
// kept, so a later call tries again.
template <class Plans>
struct PlanCache {
  std::map<int64_t, std::unique_ptr<Plans>> by_rows;

  template <class Make>
  Plans* get(mgk_ctx* ctx, int64_t rows, Make make) {
    if (auto it = by_rows.find(rows); it != by_rows.end()) return it->second.get();
    auto made = std::make_unique<Plans>();
    if (const cublasStatus_t e = make(*made); e != CUBLAS_STATUS_SUCCESS) {
      mgk::set_error(ctx, "cuBLASLt plan for %lld rows: %s", (long long)rows, cublasGetStatusString(e));
      return nullptr;
    }
    return (by_rows[rows] = std::move(made)).get();
  }
};

// The SiLU-gated MLP of moe/fused_moe_fwd and the EP variants: inputs 3..8 are gate_proj
// (weight I x N, bias I), up_proj, down_proj (weight N x I, bias N).
struct Mlp {
  struct Plans {
    mgk::lt::Gemm gu, down;
  };
  PlanCache<Plans> plans;
  int64_t KP = 0;  // I + 1 (the bias column), rounded up to 8 elements
  mgk::DeviceBuffer<bf16> wgu, wd, act;
  mgk::DeviceBuffer<float> gu;

  int setup(mgk_ctx* ctx, const Dims& d) {
    KP = (d.I + 1 + 7) / 8 * 8;
    const int64_t cap = bucket(d.capacity());
    MGK_CUDA_TRY(ctx, wgu.allocate(2 * d.I * d.N));
    MGK_CUDA_TRY(ctx, wd.allocate(d.N * KP));
    MGK_CUDA_TRY(ctx, act.allocate(cap * KP));
    MGK_CUDA_TRY(ctx, gu.allocate(cap * 2 * d.I));
    return 0;
  }

  // cuBLASLt plans for `rows` (bucketed) rows, made on first use.
  Plans* plan(mgk_ctx* ctx, Path& p, int64_t rows) {
    return plans.get(ctx, rows, [&](Plans& made) {
      mgk::lt::GemmShape a{rows, 2 * p.d.I, p.d.N};
      a.trans_b = true;
      a.d_type = CUDA_R_32F;
      mgk::lt::GemmShape b{rows, p.d.N, KP};
      b.trans_b = true;
      cublasStatus_t e = made.gu.plan(p.lt, a, size_t(4) << 20);
      if (e == CUBLAS_STATUS_SUCCESS) e = made.down.plan(p.lt, b, size_t(4) << 20);
      return e;
    });
  }

  // y rows [0, received) = MLP(recv rows).
  int run(mgk_ctx* ctx, Path& p, const mgk_tensor* in, int64_t received, cudaStream_t st) {
    if (received == 0) return 0;  // none of this rank's experts got a token
    const Dims& d = p.d;
    const int64_t rows = bucket(received);
    Plans* pl = plan(ctx, p, rows);
    if (!pl) return 1;
    MGK_CUDA_TRY(ctx, cudaMemcpyAsync(wgu, in[3].data, size_t(d.I * d.N) * 2, cudaMemcpyDeviceToDevice, st));
    MGK_CUDA_TRY(ctx, cudaMemcpyAsync(wgu + d.I * d.N, in[5].data, size_t(d.I * d.N) * 2, cudaMemcpyDeviceToDevice, st));
    fold_bias_kernel<<<grid(d.N * KP), 256, 0, st>>>(static_cast<const bf16*>(in[7].data),
                                                     static_cast<const bf16*>(in[8].data), d.N, d.I, KP, wd);
    MGK_LAUNCH_CHECK(ctx);
    // Rows past `received` are stale; every row is computed on its own, so they only cost time.
    MGK_CUBLAS_TRY(ctx, pl->gu.run(p.recv, wgu, gu, st));
    activation_kernel<<<grid(received * KP), 256, 0, st>>>(gu, static_cast<const bf16*>(in[4].data),
                                                           static_cast<const bf16*>(in[6].data), received, d.I, KP,
                                                           act);
    MGK_LAUNCH_CHECK(ctx);
    MGK_CUBLAS_TRY(ctx, pl->down.run(act, wd, p.y, st));
    return 0;
  }
};


// The LoRA MLP of moe/fused_moe_fwd_lora: inputs 3..8 as for Mlp, then the owner's adapters
// (rank R, unscaled) A_g R x N, B_g I x R, A_u R x N, B_u I x R, A_d R x I, B_d N x R
// (inputs 9..14). PKB rounds every linear's output to bf16 and every add:
//   g = bf16(bf16(x Wg^T + bg) + bf16(bf16(x Ag^T) Bg^T)),  u alike,
//   a = bf16(bf16(silu(g)) * u),
//   y = bf16(bf16(a Wd^T + bd) + bf16(bf16(a Ad^T) Bd^T)).
// Four cuBLASLt GEMMs keep those points: (1) x [Wg; Wu; Ag; Au]^T in fp32; (2) the two
// rank-R up-projections as one GEMM of [bf16(x Ag^T) | bf16(x Au^T)] with the block
// diagonal [Bg 0; 0 Bu] (the zero blocks add exact zeros); (3) act [Ad | 0; Wd | bd] with
// bf16 output: columns [0, R) are bf16(a Ad^T), the rest bf16(a Wd^T + bd) (bias folded as
// in Mlp); (4) bf16(a Ad^T) Bd^T in bf16; then the add.
__global__ void lora_round_kernel(const float* o1, int64_t rows, int64_t C1, int64_t off, int64_t R2, bf16* xa) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < rows * R2; i += int64_t(gridDim.x) * blockDim.x)
    xa[i] = __float2bfloat16_rn(o1[(i / R2) * C1 + off + i % R2]);
}

// [Bg 0; 0 Bu]: 2I x 2R.
__global__ void lora_block_kernel(const bf16* bg, const bf16* bu, int64_t I, int64_t R, bf16* out) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < 4 * I * R; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = i / (2 * R), c = i % (2 * R);
    bf16 v = __float2bfloat16_rn(0.0f);
    if (r < I && c < R) v = bg[r * R + c];
    if (r >= I && c >= R) v = bu[(r - I) * R + c - R];
    out[i] = v;
  }
}

// [Ad | 0; Wd | bd | 0]: (R + N) x KP.
__global__ void lora_fold_down_kernel(const bf16* ad, const bf16* w, const bf16* b, int64_t R, int64_t N,
                                      int64_t I, int64_t KP, bf16* out) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < (R + N) * KP; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = i / KP, c = i % KP;
    bf16 v = __float2bfloat16_rn(0.0f);
    if (r < R) {
      if (c < I) v = ad[r * I + c];
    } else if (c < I) {
      v = w[(r - R) * I + c];
    } else if (c == I) {
      v = b[r - R];
    }
    out[i] = v;
  }
}

// act [rows x KP] from o1 (fp32 [G | U | ...], row stride C1) and o2 (fp32 [GL | UL]):
// g = bf16(bf16(G + bg) + bf16(GL)), u alike, a = bf16(bf16(silu(g)) * u); column I is 1.
__global__ void lora_activation_kernel(const float* o1, int64_t C1, const float* o2, const bf16* bg,
                                       const bf16* bu, int64_t rows, int64_t I, int64_t KP, bf16* out) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < rows * KP; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = i / KP, c = i % KP;
    float v = c == I ? 1.0f : 0.0f;
    if (c < I) {
      const float g = round_bf16(round_bf16(o1[r * C1 + c] + __bfloat162float(bg[c])) + round_bf16(o2[r * 2 * I + c]));
      const float u =
          round_bf16(round_bf16(o1[r * C1 + I + c] + __bfloat162float(bu[c])) + round_bf16(o2[r * 2 * I + I + c]));
      v = round_bf16(g / (1.0f + expf(-g))) * u;
    }
    out[i] = __float2bfloat16_rn(v);
  }
}

// y = bf16(Y0 + DL): Y0 columns [R, R + N) of o3 (row stride R + N), DL rows of N.
__global__ void lora_add_kernel(const bf16* o3, const bf16* dl, int64_t rows, int64_t N, int64_t R, bf16* y) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < rows * N; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = i / N, n = i % N;
    y[i] = __float2bfloat16_rn(__bfloat162float(o3[r * (R + N) + R + n]) + __bfloat162float(dl[i]));
  }
}

struct LoraMlp {
  struct Plans {
    mgk::lt::Gemm g1, g2, g3, g4;
  };
  PlanCache<Plans> plans;
  int64_t R = 0, C1 = 0, KP = 0;  // C1 = 2I + 2R (GEMM 1's columns); KP as in Mlp
  mgk::DeviceBuffer<bf16> w1, wb, w3, w4, xa, act, o3, dl;
  mgk::DeviceBuffer<float> o1, o2;

  // `adapter_rank`: R, the dim RK.
  int setup(mgk_ctx* ctx, const Dims& d, int64_t adapter_rank) {
    R = adapter_rank;
    C1 = 2 * d.I + 2 * R;
    KP = (d.I + 1 + 7) / 8 * 8;
    const int64_t cap = bucket(d.capacity());
    MGK_CUDA_TRY(ctx, w1.allocate(C1 * d.N));
    MGK_CUDA_TRY(ctx, wb.allocate(4 * d.I * R));
    MGK_CUDA_TRY(ctx, w3.allocate((R + d.N) * KP));
    MGK_CUDA_TRY(ctx, w4.allocate(d.N * R));
    MGK_CUDA_TRY(ctx, o1.allocate(cap * C1));
    MGK_CUDA_TRY(ctx, xa.allocate(cap * 2 * R));
    MGK_CUDA_TRY(ctx, o2.allocate(cap * 2 * d.I));
    MGK_CUDA_TRY(ctx, act.allocate(cap * KP));
    MGK_CUDA_TRY(ctx, o3.allocate(cap * (R + d.N)));
    MGK_CUDA_TRY(ctx, dl.allocate(cap * d.N));
    return 0;
  }

  Plans* plan(mgk_ctx* ctx, Path& p, int64_t rows) {
    return plans.get(ctx, rows, [&](Plans& made) {
      const Dims& d = p.d;
      mgk::lt::GemmShape s1{rows, C1, d.N};
      s1.trans_b = true;
      s1.d_type = CUDA_R_32F;
      mgk::lt::GemmShape s2{rows, 2 * d.I, 2 * R};
      s2.trans_b = true;
      s2.d_type = CUDA_R_32F;
      mgk::lt::GemmShape s3{rows, R + d.N, KP};
      s3.trans_b = true;
      mgk::lt::GemmShape s4{rows, d.N, R};
      s4.trans_b = true;
      s4.lda = R + d.N;  // the first R columns of GEMM 3's output
      cublasStatus_t e = made.g1.plan(p.lt, s1, size_t(4) << 20);
      if (e == CUBLAS_STATUS_SUCCESS) e = made.g2.plan(p.lt, s2, size_t(4) << 20);
      if (e == CUBLAS_STATUS_SUCCESS) e = made.g3.plan(p.lt, s3, size_t(4) << 20);
      if (e == CUBLAS_STATUS_SUCCESS) e = made.g4.plan(p.lt, s4, size_t(4) << 20);
      return e;
    });
  }

  // y rows [0, received) = MLP_lora(recv rows).
  int run(mgk_ctx* ctx, Path& p, const mgk_tensor* in, int64_t received, cudaStream_t st) {
    if (received == 0) return 0;
    const Dims& d = p.d;
    const int64_t rows = bucket(received), IN = d.I * d.N, RN = R * d.N;
    Plans* pl = plan(ctx, p, rows);
    if (!pl) return 1;
    const std::pair<int, int64_t> parts[4] = {{3, 0}, {5, IN}, {9, 2 * IN}, {11, 2 * IN + RN}};
    for (auto [input, at] : parts)
      MGK_CUDA_TRY(ctx, cudaMemcpyAsync(w1 + at, in[input].data, size_t(input < 9 ? IN : RN) * 2,
                                        cudaMemcpyDeviceToDevice, st));
    // Bd copied too: the plans assume 256-byte aligned operands.
    MGK_CUDA_TRY(ctx, cudaMemcpyAsync(w4, in[14].data, size_t(d.N * R) * 2, cudaMemcpyDeviceToDevice, st));
    lora_block_kernel<<<grid(4 * d.I * R), 256, 0, st>>>(static_cast<const bf16*>(in[10].data),
                                                         static_cast<const bf16*>(in[12].data), d.I, R, wb);
    MGK_LAUNCH_CHECK(ctx);
    lora_fold_down_kernel<<<grid((R + d.N) * KP), 256, 0, st>>>(
        static_cast<const bf16*>(in[13].data), static_cast<const bf16*>(in[7].data),
        static_cast<const bf16*>(in[8].data), R, d.N, d.I, KP, w3);
    MGK_LAUNCH_CHECK(ctx);
    // Rows past `received` are stale; every row is computed on its own, so they only cost time.
    MGK_CUBLAS_TRY(ctx, pl->g1.run(p.recv, w1, o1, st));
    lora_round_kernel<<<grid(received * 2 * R), 256, 0, st>>>(o1, received, C1, 2 * d.I, 2 * R, xa);
    MGK_LAUNCH_CHECK(ctx);
    MGK_CUBLAS_TRY(ctx, pl->g2.run(xa, wb, o2, st));
    lora_activation_kernel<<<grid(received * KP), 256, 0, st>>>(o1, C1, o2, static_cast<const bf16*>(in[4].data),
                                                                static_cast<const bf16*>(in[6].data), received,
                                                                d.I, KP, act);
    MGK_LAUNCH_CHECK(ctx);
    MGK_CUBLAS_TRY(ctx, pl->g3.run(act, w3, o3, st));
    MGK_CUBLAS_TRY(ctx, pl->g4.run(o3, w4, dl, st));
    lora_add_kernel<<<grid(received * d.N), 256, 0, st>>>(o3, dl, received, d.N, R, p.y);
    MGK_LAUNCH_CHECK(ctx);
    return 0;
  }
};

}  // namespace moe
