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

constexpr int kPartials = 64;  // the oracle's blocks per rank for amax

struct Fp8AllGatherParams : quant::DelayedScaling {
  using DelayedScaling::DelayedScaling;

  int setup() { return setup_amax(P); }

  int run(const mgk_tensor* in, const mgk_tensor* out, cudaStream_t st) {
    auto* full = static_cast<__nv_bfloat16*>(out[0].data);
    __nv_bfloat16* mine = full + rank() * P;
    if (int rc = round_trip(in, out, P, mine, st)) return rc;
    // In place: each rank's send buffer is its own slot of the gathered tensor.
    MGK_NCCL_STEP(ctx, ncclAllGather(mine, full, size_t(P), ncclBfloat16, comm(), st));
    return 0;
  }

  // Exact, in fp64 from the regenerated inputs, per rank q: amax_q, the rolled history, its max
  // M_q (clamped at 1e-12), scale_q = fp32(M_q / 448) (an fp64 quotient of fp32 values rounded
  // once to fp32 is the correctly rounded fp32 quotient), x / scale_q likewise, its e4m3
  // value, the fp32 product with scale_q (exact in fp64, then rounded to fp32) and its bf16
  // rounding: bit for bit what the reference computes. Both outputs are compared exactly.
  int oracle(const mgk_oracle_args* a, cudaStream_t st) {
    const int W = world();
    const int64_t P = this->P;  // by value into the device lambda
    const mgk_input_gen g = a->gens[0];
    mgk::oracle::Scratch scratch(st);
    double* scale = nullptr;
    if (int rc = oracle_scales<kPartials>(a, scratch, P, &scale, st)) return rc;
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
};

}  // namespace

MGK_REFERENCE(Fp8AllGatherParams)
