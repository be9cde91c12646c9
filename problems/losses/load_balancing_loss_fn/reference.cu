// Reference, as ParallelKernelBench's PyTorch code computes it, fused: one kernel does every
// token's softmax (fp32, rounded to bf16), its top-2 (ties to the lower index) and each
// block's partial sums (per expert: the tokens picking it and the sum of bf16 p); one block
// adds the partials in order and computes L_r = E sum_e (count_e / M) bf16(psum_e / M) in
// fp32; NCCL averages the 4-byte loss over the ranks (ncclAvg: the sum, then / W).
#include <algorithm>

#include "mgk/reference_kit.h"

namespace {

constexpr int kE = 8, kK = 2;  // ParallelKernelBench's experts and top-k
constexpr int kThreads = 256, kMaxBlocks = 264;

__global__ void partials_kernel(const __nv_bfloat16* logits, int64_t m, float* partial) {
  float picks[kE] = {}, psum[kE] = {};
  for (int64_t t = blockIdx.x * int64_t(kThreads) + threadIdx.x; t < m; t += int64_t(gridDim.x) * kThreads) {
    const uint4 raw = reinterpret_cast<const uint4*>(logits)[t];  // a token's 8 logits: 16 bytes
    const auto* h = reinterpret_cast<const __nv_bfloat16*>(&raw);
    float x[kE], top = -INFINITY, sum = 0;
    for (int e = 0; e < kE; ++e) x[e] = __bfloat162float(h[e]), top = fmaxf(top, x[e]);
    for (int e = 0; e < kE; ++e) x[e] = expf(x[e] - top), sum += x[e];
    for (int e = 0; e < kE; ++e) x[e] = __bfloat162float(__float2bfloat16_rn(x[e] / sum)), psum[e] += x[e];
    unsigned taken = 0;
    for (int k = 0; k < kK; ++k) {
      int best = -1;
      for (int e = 0; e < kE; ++e)
        if (!(taken >> e & 1) && (best < 0 || x[e] > x[best])) best = e;
      taken |= 1u << best;
    }
    for (int e = 0; e < kE; ++e) picks[e] += float(taken >> e & 1);
  }
  __shared__ float warps[kThreads / 32][2 * kE];
  for (int e = 0; e < kE; ++e)
    for (int o = 16; o; o /= 2) {
      picks[e] += __shfl_xor_sync(0xffffffffu, picks[e], o);
      psum[e] += __shfl_xor_sync(0xffffffffu, psum[e], o);
    }
  if (threadIdx.x % 32 == 0)
    for (int e = 0; e < kE; ++e) warps[threadIdx.x / 32][e] = picks[e], warps[threadIdx.x / 32][kE + e] = psum[e];
  __syncthreads();
  if (threadIdx.x < 2 * kE) {
    float v = 0;
    for (int w = 0; w < kThreads / 32; ++w) v += warps[w][threadIdx.x];
    partial[blockIdx.x * 2 * kE + threadIdx.x] = v;
  }
}

// One warp: the partials in block order, then L_r into loss.
__global__ void finish_kernel(const float* partial, int blocks, int64_t m, float* loss) {
  const int e = threadIdx.x;
  float term = 0;
  if (e < kE) {
    float picks = 0, psum = 0;
    for (int b = 0; b < blocks; ++b) picks += partial[b * 2 * kE + e], psum += partial[b * 2 * kE + kE + e];
    const float router_prob = __bfloat162float(__float2bfloat16_rn(psum / float(m)));  // a bf16 mean in PyTorch
    term = picks / float(m) * router_prob;
  }
  for (int o = 16; o; o /= 2) term += __shfl_xor_sync(0xffffffffu, term, o);
  if (e == 0) *loss = term * float(kE);
}

// Per rank (blockIdx.y), exactly: the sum of p[e] over its tokens, the tokens whose exact
// top-2 holds e (ties to the lower index), and the tokens where an expert left out has a p
// within a relative 2^-6 of the 2nd's but not equal to it (bf16 rounding of p may then pick
// either; equal p, i.e. equal logits, are decided by the lower index in every order).
__global__ void exact_sums_kernel(mgk_input_gen g, int64_t m, double* psum, double* picks, double* ambiguous) {
  __shared__ double s_psum[kE], s_picks[kE], s_amb;
  if (threadIdx.x < kE) s_psum[threadIdx.x] = 0, s_picks[threadIdx.x] = 0;
  if (threadIdx.x == 0) s_amb = 0;
  __syncthreads();
  const int r = blockIdx.y;
  for (int64_t t = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; t < m; t += int64_t(gridDim.x) * blockDim.x) {
    double p[kE], top = -INFINITY, sum = 0;
    for (int e = 0; e < kE; ++e) p[e] = mgk::gen_value(g, r, t * kE + e), top = fmax(top, p[e]);
    for (int e = 0; e < kE; ++e) p[e] = exp(p[e] - top), sum += p[e];
    int first = 0;
    for (int e = 0; e < kE; ++e) p[e] /= sum, first = p[e] > p[first] ? e : first;
    int second = first == 0 ? 1 : 0;
    for (int e = 0; e < kE; ++e)
      if (e != first && p[e] > p[second]) second = e;
    double third = -1;  // the largest p left out that is not equal to the 2nd's
    for (int e = 0; e < kE; ++e)
      if (e != first && e != second && p[e] != p[second]) third = fmax(third, p[e]);
    for (int e = 0; e < kE; ++e) atomicAdd(&s_psum[e], p[e]);
    atomicAdd(&s_picks[first], 1.0), atomicAdd(&s_picks[second], 1.0);
    if (p[second] - third <= 0x1p-6 * p[second]) atomicAdd(&s_amb, 1.0);
  }
  __syncthreads();
  if (threadIdx.x < kE) {
    atomicAdd(&psum[r * kE + threadIdx.x], s_psum[threadIdx.x]);
    atomicAdd(&picks[r * kE + threadIdx.x], s_picks[threadIdx.x]);
  }
  if (threadIdx.x == 0) atomicAdd(&ambiguous[r], s_amb);
}

__global__ void exact_loss_kernel(const double* psum, const double* picks, const double* ambiguous, int world,
                                  int64_t m, double* expected, float* scale) {
  double loss = 0, ties = 0;
  for (int r = 0; r < world; ++r) {
    double lr = 0, pmax = 0, pmin = 1;
    for (int e = 0; e < kE; ++e) {
      const double P = psum[r * kE + e] / double(m);
      lr += picks[r * kE + e] / double(m) * P, pmax = fmax(pmax, P), pmin = fmin(pmin, P);
    }
    loss += kE * lr;
    ties += ambiguous[r] * kE * (pmax - pmin) / double(m);
  }
  loss /= world, ties /= world;
  expected[0] = loss;
  scale[0] = float(0x1p16 * (fabs(loss) * (1 + mgk::oracle::fp32_accumulation(m)) + ties / mgk::oracle::kBf16U));
}

struct LoadBalancingLoss : mgk::Reference {
  using Reference::Reference;
  const int64_t E = dim("E"), K = dim("K"), M = dim("M");
  const int blocks = int(std::clamp<int64_t>((M + kThreads - 1) / kThreads, 1, kMaxBlocks));
  mgk::DeviceBuffer<float> partial;  // blocks x 2E: per expert, picks then sum of p

  int setup() {
    if (E != kE || K != kK) return mgk::set_error(ctx, "the reference needs E = 8, K = 2");
    MGK_CUDA_TRY(ctx, partial.allocate(int64_t(blocks) * 2 * kE));
    return 0;
  }

  int run(const mgk_tensor* in, const mgk_tensor* out, cudaStream_t st) {
    auto* loss = static_cast<float*>(out[0].data);
    partials_kernel<<<unsigned(blocks), kThreads, 0, st>>>(static_cast<const __nv_bfloat16*>(in[0].data), M, partial);
    MGK_LAUNCH_CHECK(ctx);
    finish_kernel<<<1, 32, 0, st>>>(partial, blocks, M, loss);
    MGK_LAUNCH_CHECK(ctx);
    MGK_NCCL_STEP(ctx, ncclAllReduce(loss, loss, 1, ncclFloat32, ncclAvg, comm(), st));
    return 0;
  }

  // The exact mean over ranks of E sum_e f_e P_e (softmax, top-2 and means in fp64, from the
  // regenerated logits). S, in units of u32 = 2^-24: 2^16 (that is u / u32) times |loss| for
  // the bf16 roundings of p and of P_e (each at most u relative; the factor 3 counts both and
  // a margin) and the fp32 sums over M tokens, plus the ties' allowance T / u (statement.md).
  int oracle(const mgk_oracle_args* a, cudaStream_t st) {
    const int world = this->world();
    mgk::oracle::Scratch scratch(st);
    double* sums = scratch.get<double>(world * (2 * kE + 1));
    if (!scratch.ok()) return mgk::set_error(ctx, "oracle: out of device memory");
    MGK_CUDA_TRY(ctx, cudaMemsetAsync(sums, 0, sizeof(double) * world * (2 * kE + 1), st));
    double *psum = sums, *picks = sums + world * kE, *ambiguous = sums + 2 * world * kE;
    const dim3 grid(unsigned(std::min<int64_t>((M + 255) / 256, 512)), unsigned(world));
    exact_sums_kernel<<<grid, 256, 0, st>>>(a->gens[0], M, psum, picks, ambiguous);
    MGK_LAUNCH_CHECK(ctx);
    exact_loss_kernel<<<1, 1, 0, st>>>(psum, picks, ambiguous, world, M, static_cast<double*>(a->expected[0]),
                                       a->scale[0]);
    MGK_LAUNCH_CHECK(ctx);
    return 0;
  }
};

}  // namespace

MGK_REFERENCE(LoadBalancingLoss)
