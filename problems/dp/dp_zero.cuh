// The ZeRO references (dp/zero1_optimizer_shard, dp/zero2_optimizer_shard_grad), which differ
// only in how a rank gets its shard of the mean gradient: ZeRO-1 all-reduces the flat
// gradients and takes its slice, ZeRO-2 reduce-scatters them. Otherwise as ddp: rank 0's
// parameters are broadcast, every rank runs the MLP on its batch, and rank r does the Adam
// step of its shard [r P, min((r + 1) P, numel)) of the flat parameters (P = ceil(numel / W);
// the last shard may be shorter), then the updated shards are all-gathered (ncclAllGather of
// P elements each, the tail beyond numel unused) and unflattened into W1, b1, W2, b2.
#pragma once
#include <algorithm>

#include "dp_mlp.cuh"
#include "dp_oracle.cuh"

namespace dp::zero {

struct State {
  Dims d;
  Mlp mlp;
  int64_t P = 0, lo = 0, hi = 0;  // this rank's shard
  void* params = nullptr;         // flat bf16 [numel]
  void* grads = nullptr;          // flat bf16 [W P]: the tail beyond numel stays zero
  void* gshard = nullptr;         // ZeRO-2: this rank's reduced gradient shard [P]
  void* shard = nullptr;          // the updated parameter shard [P]
  void* gathered = nullptr;       // [W P]
  mgk::oracle::Blas blas;
  ~State() {
    for (void* p : {params, grads, gshard, shard, gathered}) cudaFree(p);
  }
};

inline State& state(mgk_ctx* ctx) { return *static_cast<State*>(ctx->state); }

inline void shard_of(mgk_ctx* ctx, const Dims& d, int64_t* P, int64_t* lo, int64_t* hi) {
  *P = (d.numel() + ctx->world_size - 1) / ctx->world_size;
  *lo = std::min(d.numel(), ctx->rank * *P);
  *hi = std::min(d.numel(), *lo + *P);
}

inline int setup(mgk_ctx* ctx) {
  auto* s = new State;
  ctx->state = s;
  s->d = dims(ctx);
  shard_of(ctx, s->d, &s->P, &s->lo, &s->hi);
  const size_t full = size_t(s->P) * ctx->world_size * 2;
  MGK_CUDA_TRY(ctx, cudaMalloc(&s->params, size_t(s->d.numel()) * 2));
  MGK_CUDA_TRY(ctx, cudaMalloc(&s->grads, full));
  MGK_CUDA_TRY(ctx, cudaMemset(s->grads, 0, full));
  MGK_CUDA_TRY(ctx, cudaMalloc(&s->gshard, size_t(s->P) * 2));
  MGK_CUDA_TRY(ctx, cudaMalloc(&s->shard, size_t(s->P) * 2));
  MGK_CUDA_TRY(ctx, cudaMalloc(&s->gathered, full));
  return s->mlp.setup(ctx, s->d);
}

inline void teardown(mgk_ctx* ctx) { delete &state(ctx); }

// in: X, Y, W1, b1, W2, b2. out: W1, b1, W2, b2 (full), m and v of this rank's shard.
template <bool kReduceScatter>
int run(mgk_ctx* ctx, const mgk_tensor* in, const mgk_tensor* out, cudaStream_t st) {
  State& s = state(ctx);
  const Dims& d = s.d;
  const int64_t offs[5] = {0, d.off_b1(), d.off_W2(), d.off_b2(), d.numel()};
  auto* flat = static_cast<char*>(s.params);
  if (ctx->rank == 0)  // the other ranks' parameters are replaced by the broadcast
    for (int k = 0; k < 4; ++k)
      MGK_CUDA_TRY(ctx, cudaMemcpyAsync(flat + offs[k] * 2, in[2 + k].data, mgk::nbytes(in[2 + k]),
                                        cudaMemcpyDeviceToDevice, st));
  MGK_NCCL_STEP(ctx, ncclBroadcast(s.params, s.params, d.numel(), ncclBfloat16, 0, mgk::comm(ctx), st));
  if (int e = s.mlp.gradients(ctx, in[0].data, in[1].data, s.params, s.grads, st)) return e;
  const void* g = s.grads;
  int64_t g_base = 0;
  if (kReduceScatter) {
    MGK_NCCL_STEP(ctx, ncclReduceScatter(s.grads, s.gshard, s.P, ncclBfloat16, ncclSum, mgk::comm(ctx), st));
    g = s.gshard, g_base = s.lo;
  } else {
    MGK_NCCL_STEP(ctx, ncclAllReduce(s.grads, s.grads, d.numel(), ncclBfloat16, ncclSum, mgk::comm(ctx), st));
  }
  MGK_CUDA_TRY(ctx, adam(d, ctx->world_size, g, g_base, s.params, 0, s.lo, s.hi, one_segment(s.lo, s.hi, s.shard),
                         one_segment(s.lo, s.hi, out[4].data), one_segment(s.lo, s.hi, out[5].data), st));
  MGK_NCCL_STEP(ctx, ncclAllGather(s.shard, s.gathered, s.P, ncclBfloat16, mgk::comm(ctx), st));
  const auto* gathered = static_cast<const char*>(s.gathered);
  for (int k = 0; k < 4; ++k)
    MGK_CUDA_TRY(ctx, cudaMemcpyAsync(out[k].data, gathered + offs[k] * 2, size_t(offs[k + 1] - offs[k]) * 2,
                                      cudaMemcpyDeviceToDevice, st));
  return 0;
}

// As ddp's: the mean gradient at rank 0's parameters; the full updated parameters, and the
// moments of this rank's shard.
inline int oracle(mgk_ctx* ctx, const mgk_oracle_args* a, cudaStream_t st) {
  namespace o = mgk::oracle;
  const Dims d = dims(ctx);
  int64_t P, lo, hi;
  shard_of(ctx, d, &P, &lo, &hi);
  o::Scratch scratch(st);
  oracle::MeanGradient mg{scratch.get<double>(d.numel()), scratch.get<double>(d.numel()),
                          scratch.get<double>(d.numel())};
  if (!scratch.ok()) return mgk::set_error(ctx, "oracle: out of device memory");
  MGK_CUDA_TRY(ctx, oracle::load_params(d, a->gens + 2, 0, mg.p, st));
  if (int e = oracle::mean_gradient(ctx, state(ctx).blas, d, a->gens[0], a->gens[1], mg, st)) return e;
  const oracle::Targets none;
  MGK_CUDA_TRY(ctx, oracle::adam(d, mg, 0, d.numel(), oracle::param_targets(d, a, 0), none, none, st));
  MGK_CUDA_TRY(ctx, oracle::adam(d, mg, lo, hi, none, oracle::one_target(lo, hi, a, 4), oracle::one_target(lo, hi, a, 5),
                                 st));
  return 0;
}

}  // namespace dp::zero
