// The ZeRO references (dp/zero1_optimizer_shard, dp/zero2_optimizer_shard_grad), which differ
// only in how a rank gets its shard of the mean gradient: ZeRO-1 all-reduces the flat
// gradients and takes its slice, ZeRO-2 reduce-scatters them. Otherwise as ddp: rank 0's
// parameters are broadcast, every rank runs the MLP on its batch, and rank r does the Adam
// step of its shard [r P, min((r + 1) P, numel)) of the flat parameters (P = ceil(numel / W);
// the last shard may be shorter), then the updated shards are all-gathered (ncclAllGather of
// P elements each, the tail beyond numel unused) and unflattened into W1, b1, W2, b2. One
// reference struct, Zero<kReduceScatter>, that each of the two exports.
#pragma once
#include <algorithm>

#include "dp_mlp.cuh"
#include "dp_oracle.cuh"

namespace dp::zero {

// in: X, Y, W1, b1, W2, b2. out: W1, b1, W2, b2 (full), m and v of this rank's shard.
template <bool kReduceScatter>
struct Zero : ShardedMlpReference {
  using ShardedMlpReference::ShardedMlpReference;
  mgk::DeviceBuffer<__nv_bfloat16> params;    // flat [numel]
  mgk::DeviceBuffer<__nv_bfloat16> grads;     // flat [W P]: the tail beyond numel stays zero
  mgk::DeviceBuffer<__nv_bfloat16> gshard;    // ZeRO-2: this rank's reduced gradient shard [P]
  mgk::DeviceBuffer<__nv_bfloat16> shard;     // the updated parameter shard [P]
  mgk::DeviceBuffer<__nv_bfloat16> gathered;  // [W P]

  int setup() {
    const int64_t full = P * world();
    MGK_CUDA_TRY(ctx, params.allocate(d.numel()));
    MGK_CUDA_TRY(ctx, grads.allocate(full));
    MGK_CUDA_TRY(ctx, cudaMemset(grads, 0, size_t(full) * 2));
    MGK_CUDA_TRY(ctx, gshard.allocate(P));
    MGK_CUDA_TRY(ctx, shard.allocate(P));
    MGK_CUDA_TRY(ctx, gathered.allocate(full));
    return mlp.setup(ctx, d);
  }

  int run(const mgk_tensor* in, const mgk_tensor* out, cudaStream_t st) {
    const int64_t offs[5] = {0, d.off_b1(), d.off_W2(), d.off_b2(), d.numel()};
    if (rank() == 0)  // the other ranks' parameters are replaced by the broadcast
      for (int k = 0; k < 4; ++k)
        MGK_CUDA_TRY(ctx, cudaMemcpyAsync(params.get() + offs[k], in[2 + k].data, mgk::nbytes(in[2 + k]),
                                          cudaMemcpyDeviceToDevice, st));
    MGK_NCCL_STEP(ctx, ncclBroadcast(params, params, d.numel(), ncclBfloat16, 0, comm(), st));
    if (int e = mlp.gradients(ctx, in[0].data, in[1].data, params, grads, st)) return e;
    const void* g = grads;
    int64_t g_base = 0;
    if (kReduceScatter) {
      MGK_NCCL_STEP(ctx, ncclReduceScatter(grads, gshard, P, ncclBfloat16, ncclSum, comm(), st));
      g = gshard, g_base = lo;
    } else {
      MGK_NCCL_STEP(ctx, ncclAllReduce(grads, grads, d.numel(), ncclBfloat16, ncclSum, comm(), st));
    }
    MGK_CUDA_TRY(ctx, adam(d, world(), g, g_base, params, 0, lo, hi, one_segment(lo, hi, shard),
                           one_segment(lo, hi, out[4].data), one_segment(lo, hi, out[5].data), st));
    MGK_NCCL_STEP(ctx, ncclAllGather(shard, gathered, P, ncclBfloat16, comm(), st));
    for (int k = 0; k < 4; ++k)
      MGK_CUDA_TRY(ctx, cudaMemcpyAsync(out[k].data, gathered.get() + offs[k], size_t(offs[k + 1] - offs[k]) * 2,
                                        cudaMemcpyDeviceToDevice, st));
    return 0;
  }

  // As ddp's: the mean gradient at rank 0's parameters; the full updated parameters, and the
  // moments of this rank's shard.
  int oracle(const mgk_oracle_args* a, cudaStream_t st) {
    mgk::oracle::Scratch scratch(st);
    dp::oracle::MeanGradient mg;
    if (int e = dp::oracle::mean_gradient_at_rank0(ctx, blas, d, a->gens, scratch, mg, st)) return e;
    const dp::oracle::Targets none;
    MGK_CUDA_TRY(ctx, dp::oracle::adam(d, mg, 0, d.numel(), dp::oracle::param_targets(d, a, 0), none, none, st));
    MGK_CUDA_TRY(ctx, dp::oracle::adam(d, mg, lo, hi, none, dp::oracle::one_target(lo, hi, a, 4),
                                       dp::oracle::one_target(lo, hi, a, 5), st));
    return 0;
  }
};

}  // namespace dp::zero
