// Reference: ParallelKernelBench's sharded Adam step, op by op in bf16 as PyTorch runs it
// (one elementwise kernel here, with each op's bf16 rounding), then ncclAllGather of the
// updated shards straight into the output.
#include <cmath>

#include "../dp_mlp.cuh"

namespace {

using bf16 = __nv_bfloat16;

// m = m0 b1 + (1 - b1) g; v = v0 b2 + (1 - b2) g g; w = w0 - lr (m / bc1) / (sqrt(v / bc2) + eps),
// rounding where PyTorch's ops do (mul_, add_, addcmul_, /, sqrt, add, div, mul, add_).
__global__ void adam(const bf16* g, const bf16* w0, const bf16* m0, const bf16* v0, int64_t n, float bc1, float bc2,
                     bf16* w, bf16* m_out, bf16* v_out) {
  auto r = [](float x) { return __bfloat162float(__float2bfloat16(x)); };
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const float gi = __bfloat162float(g[i]);
    const float m = r(r(__bfloat162float(m0[i]) * float(dp::kBeta1)) + float(1.0 - dp::kBeta1) * gi);
    const float v = r(r(__bfloat162float(v0[i]) * float(dp::kBeta2)) + float(1.0 - dp::kBeta2) * gi * gi);
    const float m_hat = r(m / bc1), v_hat = r(v / bc2);
    const float denom = r(r(sqrtf(v_hat)) + float(dp::kEps));
    const float upd = r(r(m_hat / denom) * float(-dp::kLr));
    w[i] = __float2bfloat16(__bfloat162float(w0[i]) + upd);
    m_out[i] = __float2bfloat16(m);
    v_out[i] = __float2bfloat16(v);
  }
}

struct FusedAdam : mgk::Reference {
  using Reference::Reference;
  const int64_t P = dim("P"), STEP = dim("STEP");
  const double bc1 = 1.0 - std::pow(dp::kBeta1, double(STEP)), bc2 = 1.0 - std::pow(dp::kBeta2, double(STEP));
  mgk::DeviceBuffer<bf16> shard;  // the updated master shard [P]

  int setup() {
    MGK_CUDA_TRY(ctx, shard.allocate(P));
    return 0;
  }

  // in: grad, master, exp_avg, exp_avg_sq (this rank's shards). out: w_full, m, v.
  int run(const mgk_tensor* in, const mgk_tensor* out, cudaStream_t st) {
    adam<<<int(std::min<int64_t>((P + 255) / 256, 132 * 16)), 256, 0, st>>>(
        static_cast<const bf16*>(in[0].data), static_cast<const bf16*>(in[1].data), static_cast<const bf16*>(in[2].data),
        static_cast<const bf16*>(in[3].data), P, float(bc1), float(bc2), shard, static_cast<bf16*>(out[1].data),
        static_cast<bf16*>(out[2].data));
    MGK_LAUNCH_CHECK(ctx);
    MGK_NCCL_STEP(ctx, ncclAllGather(shard, out[0].data, P, ncclBfloat16, comm(), st));
    return 0;
  }

  // Exact Adam from the regenerated inputs of the rank that owns each element. Bounds (units of
  // u): m and v each round a product and a sum (b1 |m0| + |m|, b2 v0 + v); r = m^ / (sqrt(v^) + eps)
  // carries m's error divided by bc1 (sqrt(v^) + eps), v's relative error halved, and 6 roundings
  // of its own (m^, v^, sqrt, + eps, /, * lr); w adds its rounding.
  int oracle(const mgk_oracle_args* a, cudaStream_t st) {
    namespace o = mgk::oracle;
    const int64_t P = this->P, W = world();  // by value into the device lambda
    const int rank = this->rank();
    const double c1 = bc1, c2 = bc2;
    const mgk_input_gen gg = a->gens[0], gw = a->gens[1], gm = a->gens[2], gv = a->gens[3];
    double *ew = static_cast<double*>(a->expected[0]), *em = static_cast<double*>(a->expected[1]),
           *ev = static_cast<double*>(a->expected[2]);
    float *sw = a->scale[0], *sm = a->scale[1], *sv = a->scale[2];
    MGK_CUDA_TRY(ctx, o::for_each(
                          W * P,
                          [=] __device__(int64_t j) {
                            const int s = int(j / P);
                            const int64_t i = j % P;
                            const double g = mgk::gen_value(gg, s, i), w0 = mgk::gen_value(gw, s, i),
                                         m0 = mgk::gen_value(gm, s, i), v0 = mgk::gen_value(gv, s, i);
                            const double m = dp::kBeta1 * m0 + (1.0 - dp::kBeta1) * g;
                            const double v = dp::kBeta2 * v0 + (1.0 - dp::kBeta2) * g * g;
                            const double em_ = dp::kBeta1 * fabs(m0) + fabs(m), ev_ = dp::kBeta2 * v0 + v;
                            const double den = sqrt(v / c2) + dp::kEps, r = (m / c1) / den;
                            const double er = (em_ / c1) / den + fabs(r) * ev_ / (2.0 * v) + 6.0 * fabs(r);
                            const double w = w0 - dp::kLr * r;
                            ew[j] = w;
                            sw[j] = float(fabs(w) + dp::kLr * er);
                            if (s == rank) {
                              em[i] = m, sm[i] = float(em_);
                              ev[i] = v, sv[i] = float(ev_);
                            }
                          },
                          st));
    return 0;
  }
};

}  // namespace

MGK_REFERENCE(FusedAdam)
