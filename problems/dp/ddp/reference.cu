// Reference: PyTorch DDP's step as ParallelKernelBench writes it, on NCCL and cuBLASLt. Rank
// 0's parameters are flattened and broadcast (ncclBroadcast), the MLP's forward and backward
// run on this rank's batch (dp_mlp.cuh: cuBLASLt GEMMs with PyTorch's bf16 roundings), the
// flat gradients are all-reduced (ncclAllReduce, bf16 sum) and one bf16 Adam step from zero
// moments writes the parameters and both moments.
#include "../dp_mlp.cuh"
#include "../dp_oracle.cuh"

namespace {

struct State {
  dp::Dims d;
  dp::Mlp mlp;
  void* params = nullptr;  // flat bf16 [numel]
  void* grads = nullptr;   // flat bf16 [numel]
  mgk::oracle::Blas blas;
  ~State() {
    cudaFree(params);
    cudaFree(grads);
  }
};

State& state(mgk_ctx* ctx) { return *static_cast<State*>(ctx->state); }

}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  auto* s = new State;
  ctx->state = s;
  s->d = dp::dims(ctx);
  MGK_CUDA_TRY(ctx, cudaMalloc(&s->params, size_t(s->d.numel()) * 2));
  MGK_CUDA_TRY(ctx, cudaMalloc(&s->grads, size_t(s->d.numel()) * 2));
  return s->mlp.setup(ctx, s->d);
}

MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { delete &state(ctx); }

// in: X, Y, W1, b1, W2, b2. out: W1, b1, W2, b2, then m and v of each.
MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t st) {
  State& s = state(ctx);
  const dp::Dims& d = s.d;
  auto* flat = static_cast<char*>(s.params);
  if (ctx->rank == 0) {  // the other ranks' parameters are replaced by the broadcast
    const int64_t offs[4] = {0, d.off_b1(), d.off_W2(), d.off_b2()};
    for (int k = 0; k < 4; ++k)
      MGK_CUDA_TRY(ctx, cudaMemcpyAsync(flat + offs[k] * 2, in[2 + k].data, mgk::nbytes(in[2 + k]),
                                        cudaMemcpyDeviceToDevice, st));
  }
  MGK_NCCL_STEP(ctx, ncclBroadcast(s.params, s.params, d.numel(), ncclBfloat16, 0, mgk::comm(ctx), st));
  if (int e = s.mlp.gradients(ctx, in[0].data, in[1].data, s.params, s.grads, st)) return e;
  MGK_NCCL_STEP(ctx, ncclAllReduce(s.grads, s.grads, d.numel(), ncclBfloat16, ncclSum, mgk::comm(ctx), st));
  MGK_CUDA_TRY(ctx, dp::adam(d, ctx->world_size, s.grads, 0, s.params, 0, 0, d.numel(), dp::param_segments(d, out, 0),
                             dp::param_segments(d, out, 4), dp::param_segments(d, out, 8), st));
  return 0;
}

// The mean of every rank's exact gradient at rank 0's parameters, and the Adam step from it
// (dp_oracle.cuh gives the bounds).
MGK_EXPORT int mgk_oracle(mgk_ctx* ctx, const mgk_oracle_args* a, cudaStream_t st) {
  namespace o = mgk::oracle;
  const dp::Dims d = dp::dims(ctx);
  o::Scratch scratch(st);
  dp::oracle::MeanGradient mg{scratch.get<double>(d.numel()), scratch.get<double>(d.numel()),
                              scratch.get<double>(d.numel())};
  if (!scratch.ok()) return mgk::set_error(ctx, "oracle: out of device memory");
  const mgk_input_gen* g = a->gens;
  MGK_CUDA_TRY(ctx, dp::oracle::load_params(d, g + 2, 0, mg.p, st));
  if (int e = dp::oracle::mean_gradient(ctx, state(ctx).blas, d, g[0], g[1], mg, st)) return e;
  MGK_CUDA_TRY(ctx, dp::oracle::adam(d, mg, 0, d.numel(), dp::oracle::param_targets(d, a, 0),
                                     dp::oracle::param_targets(d, a, 4), dp::oracle::param_targets(d, a, 8), st));
  return 0;
}
