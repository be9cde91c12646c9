// Reference, as ParallelKernelBench's torch code computes it (delayed scaling): amax = max
// |shard| (CUB); the history rolled left by one with amax (bf16) in its last slot; scale =
// fp32(max(history)) / 448 (fp32 division); every element through an e4m3 round trip,
// bf16(fp32(e4m3(x / scale)) * scale), written straight into this rank's slot of the output;
// then an in-place NCCL all-gather of the reconstructed bf16 shards.
//
// The cast is float8_e4m3fn's: round to nearest even, NOT saturating (|q| > 464 is NaN, 448 <
// |q| <= 464 is 448). Here the hardware's saturating conversion plus an explicit NaN above
// 464 gives exactly those bits; with this scale |q| <= 448 (1 + 2^-23) anyway.
#include "../fp8_delayed_scaling.cuh"

namespace {

struct State {
  float* amax = nullptr;  // [0] amax, [1] scale
  void* temp = nullptr;
  size_t temp_bytes = 0;
  ~State() {
    cudaFree(amax);
    cudaFree(temp);
  }
};


}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  auto* s = new State;
  ctx->state = s;
  if (mgk::dim(ctx, "H") > 32) return mgk::set_error(ctx, "history longer than a warp");
  MGK_CUDA_TRY(ctx, cudaMalloc(&s->amax, 2 * sizeof(float)));
  MGK_CUDA_TRY(ctx, cub::DeviceReduce::TransformReduce(nullptr, s->temp_bytes, static_cast<const __nv_bfloat16*>(nullptr),
                                                       s->amax, mgk::dim(ctx, "P"), cuda::maximum<float>(), quant::Abs(), 0.0f));
  MGK_CUDA_TRY(ctx, cudaMalloc(&s->temp, std::max<size_t>(s->temp_bytes, 16)));
  return 0;
}

MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { delete static_cast<State*>(ctx->state); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t st) {
  auto& s = *static_cast<State*>(ctx->state);
  const int64_t P = in[0].numel;
  const auto* x = static_cast<const __nv_bfloat16*>(in[0].data);
  auto* full = static_cast<__nv_bfloat16*>(out[0].data);
  __nv_bfloat16* mine = full + ctx->rank * P;
  MGK_CUDA_TRY(ctx, cub::DeviceReduce::TransformReduce(s.temp, s.temp_bytes, x, s.amax, P, cuda::maximum<float>(), quant::Abs(),
                                                       0.0f, st));
  quant::history_kernel<<<1, 32, 0, st>>>(static_cast<const __nv_bfloat16*>(in[1].data), int(in[1].numel), s.amax,
                                   static_cast<__nv_bfloat16*>(out[1].data));
  MGK_LAUNCH_CHECK(ctx);
  quant::round_trip_kernel<<<quant::grid_for(ctx, P), 256, 0, st>>>(x, mine, P, s.amax);
  MGK_LAUNCH_CHECK(ctx);
  // In place: each rank's send buffer is its own slot of the gathered tensor.
  MGK_NCCL_STEP(ctx, ncclAllGather(mine, full, size_t(P), ncclBfloat16, mgk::comm(ctx), st));
  return 0;
}

namespace {
constexpr int kPartials = 64;  // the oracle's blocks per rank for amax
}  // namespace

// Exact, in fp64 from the regenerated inputs, per rank q: amax_q, the rolled history, its max
// M_q (clamped at 1e-12), scale_q = fp32(M_q / 448) (an fp64 quotient of fp32 values rounded
// once to fp32 is the correctly rounded fp32 quotient), x / scale_q likewise, its e4m3
// value, the fp32 product with scale_q (exact in fp64, then rounded to fp32) and its bf16
// rounding: bit for bit what the reference computes. Both outputs are compared exactly.
MGK_EXPORT int mgk_oracle(mgk_ctx* ctx, const mgk_oracle_args* a, cudaStream_t st) {
  const int W = ctx->world_size;
  const int64_t P = mgk::dim(ctx, "P");
  const int h = int(a->inputs[1].numel);
  const mgk_input_gen g = a->gens[0], hg = a->gens[1];
  mgk::oracle::Scratch scratch(st);
  double* scale = nullptr;
  if (int rc = quant::oracle_scales<kPartials>(ctx, scratch, g, P, hg, h, static_cast<double*>(a->expected[1]), &scale, st))
    return rc;
  auto* e = static_cast<double*>(a->expected[0]);
  MGK_CUDA_TRY(ctx, mgk::oracle::for_each(
                        int64_t(W) * P,
                        [=] __device__(int64_t i) {
                          const int q = int(i / P);
                          const double x = mgk::gen_value(g, q, i % P);
                          const double v = quant::recon_exact(x, scale[q]);
                          e[i] = v;
                        },
                        st));
  return 0;
}
