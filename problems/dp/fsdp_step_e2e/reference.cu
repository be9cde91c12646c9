// Reference: one FSDP step as ParallelKernelBench writes it, on NCCL and cuBLASLt.
// ncclAllGather of the P-element parameter shards into the flat parameters (the last
// rank's shorter shard padded), the MLP's forward and backward on this rank's batch
// (dp_mlp.cuh: cuBLASLt GEMMs with PyTorch's bf16 roundings), ncclReduceScatter (bf16 sum)
// of the flat gradients, and one bf16 AdamW step of this rank's shard, op by op as
// PyTorch's in-place ops round (div_, mul_, add_, addcmul_, /, sqrt, add, div, add_, add_).
#include <algorithm>

#include "../dp_mlp.cuh"
#include "../dp_oracle.cuh"

namespace {

using bf16 = __nv_bfloat16;

// Decoupled weight decay, large enough to show above the tolerance (see the statement).
constexpr double kWd = 0.5;

// g = gsum / W; m = m0 b1 + (1 - b1) g; v = v0 b2 + (1 - b2) g g; m^ = m / bc1, v^ = v / bc2;
// q = m^ / (sqrt(v^) + eps); p1 = p0 - lr q; p = p1 - lr wd p0, each op rounding to bf16
// (add_ with alpha rounds once: the product stays in fp32).
__global__ void adamw(const bf16* gsum, const bf16* p0, const bf16* m0, const bf16* v0, int64_t n, float world,
                      float bc1, float bc2, bf16* p_out, bf16* m_out, bf16* v_out) {
  auto r = [](float x) { return __bfloat162float(__float2bfloat16(x)); };
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const float g = r(__bfloat162float(gsum[i]) / world), p = __bfloat162float(p0[i]);
    const float m = r(r(__bfloat162float(m0[i]) * float(dp::kBeta1)) + float(1.0 - dp::kBeta1) * g);
    const float v = r(r(__bfloat162float(v0[i]) * float(dp::kBeta2)) + float(1.0 - dp::kBeta2) * g * g);
    const float m_hat = r(m / bc1), v_hat = r(v / bc2);
    const float denom = r(r(sqrtf(v_hat)) + float(dp::kEps));
    const float p1 = r(p + float(-dp::kLr) * r(m_hat / denom));
    p_out[i] = __float2bfloat16(p1 + float(-dp::kLr * kWd) * p);
    m_out[i] = __float2bfloat16(m);
    v_out[i] = __float2bfloat16(v);
  }
}

struct FsdpStep : dp::ShardedMlpReference {
  using ShardedMlpReference::ShardedMlpReference;
  mgk::DeviceBuffer<__nv_bfloat16> send;    // the shard padded to P elements (the short last shard only)
  mgk::DeviceBuffer<__nv_bfloat16> params;  // flat [W P], the gathered parameters
  mgk::DeviceBuffer<__nv_bfloat16> grads;   // flat [W P]: the tail beyond numel stays zero
  mgk::DeviceBuffer<__nv_bfloat16> gshard;  // this rank's reduced gradient shard [P]

  int setup() {
    const int64_t full = P * world();
    MGK_CUDA_TRY(ctx, send.allocate(P));
    MGK_CUDA_TRY(ctx, cudaMemset(send, 0, size_t(P) * 2));
    MGK_CUDA_TRY(ctx, params.allocate(full));
    MGK_CUDA_TRY(ctx, cudaMemset(params, 0, size_t(full) * 2));
    MGK_CUDA_TRY(ctx, grads.allocate(full));
    MGK_CUDA_TRY(ctx, cudaMemset(grads, 0, size_t(full) * 2));
    MGK_CUDA_TRY(ctx, gshard.allocate(P));
    return mlp.setup(ctx, d);
  }

  // in: X, Y, param_shard, exp_avg, exp_avg_sq. out: param_new, m, v (this rank's shard).
  int run(const mgk_tensor* in, const mgk_tensor* out, cudaStream_t st) {
    const int64_t len = hi - lo;
    // Every rank sends P elements: a full shard straight from the input, the short one padded.
    const void* from = in[2].data;
    if (len < P) {
      MGK_CUDA_TRY(ctx, cudaMemcpyAsync(send, in[2].data, size_t(len) * 2, cudaMemcpyDeviceToDevice, st));
      from = send;
    }
    MGK_NCCL_STEP(ctx, ncclAllGather(from, params, P, ncclBfloat16, comm(), st));
    if (int e = mlp.gradients(ctx, in[0].data, in[1].data, params, grads, st)) return e;
    MGK_NCCL_STEP(ctx, ncclReduceScatter(grads, gshard, P, ncclBfloat16, ncclSum, comm(), st));
    if (len > 0) {
      adamw<<<int(std::min<int64_t>((len + 255) / 256, 132 * 16)), 256, 0, st>>>(
          gshard, static_cast<const bf16*>(in[2].data), static_cast<const bf16*>(in[3].data),
          static_cast<const bf16*>(in[4].data), len, float(world()), float(d.bc1()), float(d.bc2()),
          static_cast<bf16*>(out[0].data), static_cast<bf16*>(out[1].data), static_cast<bf16*>(out[2].data));
      MGK_LAUNCH_CHECK(ctx);
    }
    return 0;
  }

  // The mean of every rank's exact gradient at the parameters every rank's shard makes up
  // (dp_oracle.cuh: with the bound E on the reference's error in it, units of u), then AdamW
  // exactly on this rank's shard. From zero moments (the spec's; checked here, as the bounds
  // assume it) the update r = m^ / (sqrt(v^) + eps) is c sign(g) up to eps, as dp_oracle.cuh's
  // adam explains; its bounds carry over (8 roundings of r, eps's and the sign's share), and
  // p = p1 - lr wd p0 adds the roundings of p1 = p0 - lr r and of p.
  int oracle(const mgk_oracle_args* a, cudaStream_t st) {
    namespace o = mgk::oracle;
    using dp::kBeta1, dp::kBeta2, dp::kEps, dp::kLr;
    for (int k : {3, 4})
      if (a->gens[k].dist != MGK_DIST_NORMAL || a->gens[k].a != 0.0 || a->gens[k].b != 0.0)
        return mgk::set_error(ctx, "oracle: exp_avg and exp_avg_sq must be zeros (the bounds assume a fresh optimizer)");
    const int64_t lo = this->lo;  // by value into the device lambda
    o::Scratch scratch(st);
    dp::oracle::MeanGradient mg{scratch.get<double>(d.numel()), scratch.get<double>(d.numel()),
                                scratch.get<double>(d.numel())};
    if (!scratch.ok()) return mgk::set_error(ctx, "oracle: out of device memory");
    for (int s = 0; s < world(); ++s) {
      const int64_t s_lo = std::min(d.numel(), s * P), s_len = std::min(d.numel(), s_lo + P) - s_lo;
      MGK_CUDA_TRY(ctx, o::regen(a->gens[2], s, s_len, 0, 0, 1, s_len, mg.p + s_lo, s_len, st));
    }
    if (int e = dp::oracle::mean_gradient(ctx, blas, d, a->gens[0], a->gens[1], mg, st)) return e;
    const double u = o::kBf16U, k = std::sqrt((1.0 - kBeta2) / d.bc2()), bc1 = d.bc1();
    const double c = ((1.0 - kBeta1) / bc1) / k;
    const double *Pv = mg.p, *G = mg.g, *E = mg.e;
    double *ep = static_cast<double*>(a->expected[0]), *em = static_cast<double*>(a->expected[1]),
           *ev = static_cast<double*>(a->expected[2]);
    float *sp = a->scale[0], *sm = a->scale[1], *sv = a->scale[2];
    MGK_CUDA_TRY(ctx, o::for_each(
                          hi - lo,
                          [=] __device__(int64_t j) {
                            const int64_t i = lo + j;
                            const double g = G[i], e = E[i], ag = fabs(g), p0 = Pv[i];
                            const double m = (1.0 - kBeta1) * g, v = (1.0 - kBeta2) * g * g;
                            const double r = ((1.0 - kBeta1) / bc1) * g / (ag * k + kEps);
                            const double p1 = p0 - kLr * r, p = p1 - kLr * kWd * p0;
                            double eps_part = 2.0 * c / u;
                            if (ag > 0.0) eps_part = fmin(eps_part, c * kEps * e / (g * g * k));
                            const double sign_part = ag <= 2.0 * u * e ? 2.0 * c / u : 0.0;
                            ep[j] = p;
                            sp[j] = float(fabs(p) + fabs(p1) + kLr * (8.0 * fabs(r) + eps_part + sign_part));
                            em[j] = m;
                            sm[j] = float((1.0 - kBeta1) * e + fabs(m));
                            ev[j] = v;
                            sv[j] = float((1.0 - kBeta2) * (2.0 * ag * e + u * e * e) + v);
                          },
                          st));
    return 0;
  }
};

}  // namespace

MGK_REFERENCE(FsdpStep)
