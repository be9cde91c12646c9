// Reference, as ParallelKernelBench's torch code computes it (delayed scaling, the
// Transformer-Engine style): amax = max |grads| (CUB); the history rolled left by one with
// amax (bf16) in its last slot; scale = fp32(max(history)) / 448 (fp32 division); every
// gradient element through an e4m3 round trip, bf16(fp32(e4m3(x / scale)) * scale); then a
// bf16 NCCL reduce-scatter (sum) of the reconstructed gradient and the shard times fp32(1/W)
// (torch's div_ by a Python number multiplies by the reciprocal), rounded to bf16.
//
// The cast is float8_e4m3fn's: round to nearest even, NOT saturating (|q| > 464 is NaN, 448 <
// |q| <= 464 is 448). Here the hardware's saturating conversion plus an explicit NaN above
// 464 gives exactly those bits; with this scale |q| <= 448 (1 + 2^-23) anyway.
#include "../fp8_delayed_scaling.cuh"

namespace {

constexpr int kPartials = 256;  // the oracle's blocks per rank for amax

__global__ void average_kernel(__nv_bfloat16* y, int64_t n, float inv_w) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    y[i] = __float2bfloat16_rn(__bfloat162float(y[i]) * inv_w);
}

struct Fp8ReduceScatterGrads : quant::DelayedScaling {
  using DelayedScaling::DelayedScaling;
  mgk::DeviceBuffer<__nv_bfloat16> recon;  // W P: every element through the round trip

  int setup() {
    const int64_t n = world() * P;
    if (int rc = setup_amax(n)) return rc;
    MGK_CUDA_TRY(ctx, recon.allocate(std::max<int64_t>(n, 1)));
    return 0;
  }

  int run(const mgk_tensor* in, const mgk_tensor* out, cudaStream_t st) {
    auto* shard = static_cast<__nv_bfloat16*>(out[0].data);
    if (int rc = round_trip(in, out, in[0].numel, recon, st)) return rc;
    MGK_NCCL_STEP(ctx, ncclReduceScatter(recon, shard, size_t(P), ncclBfloat16, ncclSum, comm(), st));
    average_kernel<<<quant::grid_for(ctx, P), 256, 0, st>>>(shard, P, 1.0f / float(world()));
    MGK_LAUNCH_CHECK(ctx);
    return 0;
  }

  // Exact, in fp64 from the regenerated inputs, per rank q: amax_q, the rolled history, its max
  // M_q (clamped at 1e-12), scale_q = fp32(M_q / 448) (an fp64 quotient of fp32 values rounded
  // once to fp32 is the correctly rounded fp32 quotient), x / scale_q likewise, its e4m3
  // value, the fp32 product with scale_q (exact in fp64, then rounded to fp32) and its bf16
  // rounding: recon_q, bit for bit what the reference computes. The shard is the exact mean of
  // the W recon values; its S their mean |.|. new_history is compared exactly.
  int oracle(const mgk_oracle_args* a, cudaStream_t st) {
    const int W = world(), R = rank();
    const int64_t P = this->P, n = int64_t(W) * P;  // P by value into the device lambda
    const mgk_input_gen g = a->gens[0];
    mgk::oracle::Scratch scratch(st);
    double* scale = nullptr;
    if (int rc = oracle_scales<kPartials>(a, scratch, n, &scale, st)) return rc;
    auto* e = static_cast<double*>(a->expected[0]);
    float* sc = a->scale[0];
    MGK_CUDA_TRY(ctx, mgk::oracle::for_each(
                          P,
                          [=] __device__(int64_t i) {
                            double sum = 0, mag = 0;
                            for (int q = 0; q < W; ++q) {
                              const double x = mgk::gen_value(g, q, int64_t(R) * P + i);
                              const double v = quant::recon_exact(x, scale[q]);
                              sum += v;
                              mag += fabs(v);
                            }
                            e[i] = sum / W;
                            sc[i] = float(mag / W);
                          },
                          st));
    return 0;
  }
};

}  // namespace

MGK_REFERENCE(Fp8ReduceScatterGrads)
