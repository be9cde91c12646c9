// Reference: PyTorch DDP's step as ParallelKernelBench writes it, on NCCL and cuBLASLt. Rank
// 0's parameters are flattened and broadcast (ncclBroadcast), the MLP's forward and backward
// run on this rank's batch (dp_mlp.cuh: cuBLASLt GEMMs with PyTorch's bf16 roundings), the
// flat gradients are all-reduced (ncclAllReduce, bf16 sum) and one bf16 Adam step from zero
// moments writes the parameters and both moments.
#include "../dp_mlp.cuh"
#include "../dp_oracle.cuh"

namespace {

struct Ddp : dp::MlpReference {
  using MlpReference::MlpReference;
  mgk::DeviceBuffer<__nv_bfloat16> params;  // flat [numel]
  mgk::DeviceBuffer<__nv_bfloat16> grads;   // flat [numel]

  int setup() {
    MGK_CUDA_TRY(ctx, params.allocate(d.numel()));
    MGK_CUDA_TRY(ctx, grads.allocate(d.numel()));
    return mlp.setup(ctx, d);
  }

  // in: X, Y, W1, b1, W2, b2. out: W1, b1, W2, b2, then m and v of each.
  int run(const mgk_tensor* in, const mgk_tensor* out, cudaStream_t st) {
    if (rank() == 0) {  // the other ranks' parameters are replaced by the broadcast
      const int64_t offs[4] = {0, d.off_b1(), d.off_W2(), d.off_b2()};
      for (int k = 0; k < 4; ++k)
        MGK_CUDA_TRY(ctx, cudaMemcpyAsync(params.get() + offs[k], in[2 + k].data, mgk::nbytes(in[2 + k]),
                                          cudaMemcpyDeviceToDevice, st));
    }
    MGK_NCCL_STEP(ctx, ncclBroadcast(params, params, d.numel(), ncclBfloat16, 0, comm(), st));
    if (int e = mlp.gradients(ctx, in[0].data, in[1].data, params, grads, st)) return e;
    MGK_NCCL_STEP(ctx, ncclAllReduce(grads, grads, d.numel(), ncclBfloat16, ncclSum, comm(), st));
    MGK_CUDA_TRY(ctx, dp::adam(d, world(), grads, 0, params, 0, 0, d.numel(), dp::param_segments(d, out, 0),
                               dp::param_segments(d, out, 4), dp::param_segments(d, out, 8), st));
    return 0;
  }

  // The mean of every rank's exact gradient at rank 0's parameters, and the Adam step from it
  // (dp_oracle.cuh gives the bounds).
  int oracle(const mgk_oracle_args* a, cudaStream_t st) {
    mgk::oracle::Scratch scratch(st);
    dp::oracle::MeanGradient mg;
    if (int e = dp::oracle::mean_gradient_at_rank0(ctx, blas, d, a->gens, scratch, mg, st)) return e;
    MGK_CUDA_TRY(ctx, dp::oracle::adam(d, mg, 0, d.numel(), dp::oracle::param_targets(d, a, 0),
                                       dp::oracle::param_targets(d, a, 4), dp::oracle::param_targets(d, a, 8), st));
    return 0;
  }
};

}  // namespace

MGK_REFERENCE(Ddp)
