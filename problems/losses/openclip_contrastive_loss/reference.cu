// Reference: rank r's loss needs its B image rows against every rank's B text rows. The
// text shards travel in one NCCL group on a side stream (every rank sends its shard to every
// other rank and receives theirs in ring order: slot k - 1 of `remote` holds rank r + k's),
// while the main stream computes this rank's own block: cuBLASLt's image x text_r^T with fp32
// output, then a kernel that sums the pairs' softplus terms (the positive labels on the
// block's diagonal) into per-block partial sums. Once the shards are in, one cuBLASLt GEMM
// over all W - 1 of them (B x (W - 1) B, fp32 out) and the same kernel without labels; a last
// kernel adds the partial sums and divides by B.
//
// ParallelKernelBench passes the shards around a bidirectional ring instead, (W - 1) / 2
// rounds of a blocking exchange with both neighbours and, when W - 1 is odd, one
// one-directional step, computing each received block after it arrives: the same bytes, with
// no overlap and W small GEMMs. Its logits, log-sigmoids, sums and loss are bf16; here the
// logits stay fp32 (the GEMM's accumulator) and so does the loss (the statement says why).
#include <cub/block/block_reduce.cuh>

#include <algorithm>

#include "mgk/lt_gemm.h"
#include "mgk/reference_kit.h"

namespace {

constexpr int kThreads = 256;

// -log sigmoid(-y) = log(1 + e^y), without overflow or cancellation for any y.
__device__ inline float softplus(float y) { return fmaxf(y, 0.0f) + log1pf(expf(-fabsf(y))); }

// One pair's term from its fp32 logit c: z = scale c - nbias, and softplus(-z) for a positive
// pair (label +1: -log sigmoid(z)), softplus(z) otherwise (label -1). In an own block (kOwn,
// B x B, flat index t = i B + j) the positives are the diagonal, t % (B + 1) == 0.
template <bool kOwn>
__device__ inline float pair_term(float c, int64_t t, int64_t b, float scale, float nbias) {
  const float z = fmaf(scale, c, -nbias);
  return softplus(kOwn && t % (b + 1) == 0 ? -z : z);
}

// partials[block] = the sum of the terms of this block's share of `count` logits (fp32: a
// thread adds its grid-strided terms, then the block's threads are added as a tree). The
// logits are 16-byte aligned (cudaMalloc), read 4 at a time, the count % 4 tail one by one.
template <bool kOwn>
__global__ void __launch_bounds__(kThreads)
    pair_terms_kernel(const float* __restrict__ logits, int64_t count, int64_t b, float scale, float nbias,
                      float* partials) {
  using Reduce = cub::BlockReduce<float, kThreads>;
  __shared__ typename Reduce::TempStorage tmp;
  const int64_t first = blockIdx.x * int64_t(blockDim.x) + threadIdx.x, stride = int64_t(gridDim.x) * blockDim.x;
  const int64_t vecs = count / 4;
  float acc = 0;
  for (int64_t q = first; q < vecs; q += stride) {
    const float4 c = reinterpret_cast<const float4*>(logits)[q];
    const int64_t t = 4 * q;
    acc += pair_term<kOwn>(c.x, t, b, scale, nbias) + pair_term<kOwn>(c.y, t + 1, b, scale, nbias) +
           pair_term<kOwn>(c.z, t + 2, b, scale, nbias) + pair_term<kOwn>(c.w, t + 3, b, scale, nbias);
  }
  for (int64_t t = 4 * vecs + first; t < count; t += stride) acc += pair_term<kOwn>(logits[t], t, b, scale, nbias);
  const float sum = Reduce(tmp).Sum(acc);
  if (threadIdx.x == 0) partials[blockIdx.x] = sum;
}

// loss = (sum of the n partials) / B, the partials added in fp64 by one block.
__global__ void __launch_bounds__(kThreads) finish_kernel(const float* partials, int n, int64_t b, float* loss) {
  using Reduce = cub::BlockReduce<double, kThreads>;
  __shared__ typename Reduce::TempStorage tmp;
  double acc = 0;
  for (int i = threadIdx.x; i < n; i += kThreads) acc += partials[i];
  const double sum = Reduce(tmp).Sum(acc);
  if (threadIdx.x == 0) *loss = float(sum / double(b));
}

// The oracle's sums over one B x B block of exact logits c (c[t], t = i B + j: image row i
// against text row j of the block's rank) with their magnitudes mag[t] = sum_k |x_ik y_jk|:
// sums[0] += the terms f = softplus(y), y = -l z; sums[1] += each term's share of the scale S
// (statement, "Correctness"): sigmoid(y) (SCALE (acc_d mag + |c|) + |z|) for the logit's
// rounding (fp32 dot product, the scaling, the bias) as it moves f, (acc_n + 4) f for the
// fp32 sum of the n terms and softplus's own evaluation, and 1 for a 1 + e^y rounded in fp32.
__global__ void __launch_bounds__(kThreads)
    oracle_block_kernel(const double* c, const double* mag, int64_t b, bool own, double scale, double nbias,
                        double acc_d, double acc_n, double* sums) {
  using Reduce = cub::BlockReduce<double, kThreads>;
  __shared__ typename Reduce::TempStorage tmp;
  double f_sum = 0, s_sum = 0;
  for (int64_t t = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; t < b * b; t += int64_t(gridDim.x) * blockDim.x) {
    const double z = scale * c[t] - nbias;
    const double y = own && t % (b + 1) == 0 ? -z : z;
    const double f = y > 0 ? y + log1p(exp(-y)) : log1p(exp(y));
    f_sum += f;
    s_sum += (scale * (acc_d * mag[t] + fabs(c[t])) + fabs(z)) / (1 + exp(-y)) + (acc_n + 4) * f + 1;
  }
  const double f_block = Reduce(tmp).Sum(f_sum);
  __syncthreads();  // tmp is reused
  const double s_block = Reduce(tmp).Sum(s_sum);
  if (threadIdx.x == 0) atomicAdd(&sums[0], f_block), atomicAdd(&sums[1], s_block);
}

// expected = sums[0] / B; S = sums[1] / B + 2 |loss| (the division by B: two roundings at most).
__global__ void oracle_finish_kernel(const double* sums, int64_t b, double* expected, float* scale) {
  const double loss = sums[0] / double(b);
  expected[0] = loss;
  if (scale) scale[0] = float(sums[1] / double(b) + 2 * fabs(loss));
}

struct SiglipLoss : mgk::Reference {
  using Reference::Reference;
  const int64_t B = dim("B"), D = dim("D"), SCALE = dim("SCALE"), NEG_BIAS = dim("NEG_BIAS");
  const int peers = world() - 1;  // the other ranks, whose text shards this rank receives
  mgk::lt::Handle lt;
  mgk::lt::Gemm own_gemm, remote_gemm;
  mgk::DeviceBuffer<__nv_bfloat16> remote;  // (W - 1) B x D: slot k - 1 holds rank (r + k) mod W's text rows
  mgk::DeviceBuffer<float> own_logits, remote_logits, partials;  // B x B, B x (W - 1) B, own_blocks + remote_blocks
  mgk::Stream side;                                               // the exchange
  mgk::Event inputs_ready, shards_in;
  int own_blocks = 1, remote_blocks = 0;

  // Blocks for `count` logits read 4 at a time, at most 4 a multiprocessor.
  int blocks_for(int64_t count) const {
    return int(std::clamp<int64_t>((count / 4 + kThreads - 1) / kThreads, 1, int64_t(ctx->num_sms) * 4));
  }

  int setup() {
    MGK_CUBLAS_TRY(ctx, lt.create());
    MGK_CUBLAS_TRY(ctx, own_gemm.plan(lt, {.m = B, .n = B, .k = D, .trans_b = true, .d_type = CUDA_R_32F}));
    MGK_CUDA_TRY(ctx, own_logits.allocate(B * B));
    own_blocks = blocks_for(B * B);
    if (peers > 0) {
      MGK_CUDA_TRY(ctx, remote.allocate(peers * B * D));
      // Zeros where bench/compute runs the compute part alone, without the exchange.
      MGK_CUDA_TRY(ctx, cudaMemset(remote, 0, sizeof(__nv_bfloat16) * size_t(peers * B * D)));
      MGK_CUDA_TRY(ctx, remote_logits.allocate(B * peers * B));
      MGK_CUBLAS_TRY(ctx,
                     remote_gemm.plan(lt, {.m = B, .n = peers * B, .k = D, .trans_b = true, .d_type = CUDA_R_32F}));
      remote_blocks = blocks_for(peers * B * B);
    }
    MGK_CUDA_TRY(ctx, partials.allocate(own_blocks + remote_blocks));
    MGK_CUDA_TRY(ctx, cudaStreamCreateWithFlags(side.out(), cudaStreamNonBlocking));
    MGK_CUDA_TRY(ctx, cudaEventCreateWithFlags(inputs_ready.out(), cudaEventDisableTiming));
    MGK_CUDA_TRY(ctx, cudaEventCreateWithFlags(shards_in.out(), cudaEventDisableTiming));
    return 0;
  }

  int run(const mgk_tensor* in, const mgk_tensor* out, cudaStream_t st) {
    const void* image = in[0].data;
    const auto* text = static_cast<const __nv_bfloat16*>(in[1].data);
    const float scale = float(SCALE), nbias = float(NEG_BIAS);
    const bool exchange = peers > 0 && comm();
    if (exchange) {  // on the side stream, once this call's inputs are in place
      const int w = world(), r = rank();
      const size_t shard = size_t(B * D);
      MGK_CUDA_TRY(ctx, cudaEventRecord(inputs_ready, st));
      MGK_CUDA_TRY(ctx, cudaStreamWaitEvent(side, inputs_ready, 0));
      MGK_NCCL_TRY(ctx, ncclGroupStart());
      for (int k = 1; k <= peers; ++k) {
        MGK_NCCL_TRY(ctx, ncclSend(text, shard, ncclBfloat16, (r - k + w) % w, comm(), side));
        MGK_NCCL_TRY(ctx, ncclRecv(remote + (k - 1) * shard, shard, ncclBfloat16, (r + k) % w, comm(), side));
      }
      MGK_NCCL_TRY(ctx, ncclGroupEnd());
      MGK_CUDA_TRY(ctx, cudaEventRecord(shards_in, side));
    }
    MGK_CUBLAS_TRY(ctx, own_gemm.run(image, text, own_logits, st));
    pair_terms_kernel<true><<<own_blocks, kThreads, 0, st>>>(own_logits, B * B, B, scale, nbias, partials);
    MGK_LAUNCH_CHECK(ctx);
    if (peers > 0) {
      if (exchange) MGK_CUDA_TRY(ctx, cudaStreamWaitEvent(st, shards_in, 0));
      MGK_CUBLAS_TRY(ctx, remote_gemm.run(image, remote, remote_logits, st));
      pair_terms_kernel<false><<<remote_blocks, kThreads, 0, st>>>(remote_logits, peers * B * B, B, scale, nbias,
                                                                   partials + own_blocks);
      MGK_LAUNCH_CHECK(ctx);
    }
    finish_kernel<<<1, kThreads, 0, st>>>(partials, own_blocks + remote_blocks, B, static_cast<float*>(out[0].data));
    MGK_LAUNCH_CHECK(ctx);
    return 0;
  }

  // This rank's loss exactly, block by block over the W text shards: every rank's text rows
  // and this rank's image rows regenerated in fp64, the logits and their magnitudes from fp64
  // GEMMs (products of bf16 values and their sums are exact to fp64's rounding), the terms in
  // fp64 (oracle_block_kernel), and S as the statement derives it.
  int oracle(const mgk_oracle_args* a, cudaStream_t st) {
    namespace o = mgk::oracle;
    o::Scratch scratch(st);
    double *x = scratch.get<double>(B * D), *y = scratch.get<double>(B * D), *c = scratch.get<double>(B * B),
           *mag = scratch.get<double>(B * B), *sums = scratch.get<double>(2);
    if (!scratch.ok()) return mgk::set_error(ctx, "oracle: out of device memory");
    cublasHandle_t h = oracle_blas(st);
    if (!h) return 1;
    MGK_CUDA_TRY(ctx, cudaMemsetAsync(sums, 0, 2 * sizeof(double), st));
    const double acc_d = o::fp32_accumulation(D, o::kF32U), acc_n = o::fp32_accumulation(world() * B * B, o::kF32U);
    for (int s = 0; s < world(); ++s) {
      // product_and_magnitude makes its operands absolute: both regenerated for every block.
      MGK_CUDA_TRY(ctx, o::regen(a->gens[0], rank(), D, 0, 0, B, D, x, D, st));
      MGK_CUDA_TRY(ctx, o::regen(a->gens[1], s, D, 0, 0, B, D, y, D, st));
      MGK_CUBLAS_TRY(ctx, o::product_and_magnitude(h, B, B, D, {x, D, B * D}, {y, D, B * D, true}, c, 0, mag, 0, B, st));
      oracle_block_kernel<<<o::grid_for(B * B), kThreads, 0, st>>>(c, mag, B, s == rank(), double(SCALE),
                                                                    double(NEG_BIAS), acc_d, acc_n, sums);
      MGK_LAUNCH_CHECK(ctx);
    }
    oracle_finish_kernel<<<1, 1, 0, st>>>(sums, B, static_cast<double*>(a->expected[0]), a->scale[0]);
    MGK_LAUNCH_CHECK(ctx);
    return 0;
  }
};

}  // namespace

MGK_REFERENCE(SiglipLoss)
