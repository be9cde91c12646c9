// Mutant of tests/gpu/candidates/losses/openclip_contrastive_loss.cu. Class: local instead of global normalisation, reversed (the global batch W B as the divisor of this rank's loss).
// The loss divided by the global batch size, as a mean over all W B images would be; this rank's loss
// covers its own B images and divides by B.
//
// The plain candidate's description:
// Plain: after a barrier, rank r takes the W text shards in ParallelKernelBench's ring order
// (its own; for k = 1 .. (W - 1) / 2 rank r + k's and rank r - k's; when W - 1 is odd, rank
// r + (W - 1) / 2 + 1's), each copied through the peer pointers into a private buffer. cuBLAS
// computes the shard's B x B logits image x text_s^T in fp32, and a kernel adds every pair's
// softplus(-l z) (z = SCALE logit - NEG_BIAS; l = +1 on the own block's diagonal, -1
// elsewhere) into a double. The loss is that sum over B.
#include "../../../candidates/plain_compute.cuh"

namespace {
constexpr int kThreads = 256;

// log(1 + e^y) = -log sigmoid(-y), written so that neither branch overflows.
__device__ float softplus(float y) { return y > 0 ? y + log1pf(expf(-y)) : log1pf(expf(y)); }

// sum += the terms of one B x B block of logits (logits[i * b + j]: image row i, text row j).
__global__ void add_terms_kernel(const float* logits, int64_t b, float scale, float nbias, bool own, double* sum) {
  __shared__ double warps[kThreads / 32];
  double acc = 0;
  for (int64_t t = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; t < b * b; t += int64_t(gridDim.x) * blockDim.x) {
    const int64_t i = t / b, j = t % b;
    const float z = scale * logits[t] - nbias;
    // Label +1 (the own block's diagonal): -log sigmoid(z) = softplus(-z); label -1: softplus(z).
    acc += softplus(own && i == j ? -z : z);
  }
  for (int o = 16; o; o /= 2) acc += __shfl_xor_sync(0xffffffffu, acc, o);
  if (threadIdx.x % 32 == 0) warps[threadIdx.x / 32] = acc;
  __syncthreads();
  if (threadIdx.x == 0) {
    double total = 0;
    for (int w = 0; w < kThreads / 32; ++w) total += warps[w];
    atomicAdd(sum, total);
  }
}

__global__ void loss_kernel(const double* sum, int64_t divisor, float* loss) { *loss = float(*sum / double(divisor)); }
}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  const int64_t B = mgk::dim(ctx, "B"), D = mgk::dim(ctx, "D");
  return plain::setup(ctx, {}, {size_t(B * D) * 2, size_t(B * B) * 4, sizeof(double)});
}
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { plain::teardown(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  const int64_t B = mgk::dim(ctx, "B"), D = mgk::dim(ctx, "D");
  const float scale = float(mgk::dim(ctx, "SCALE")), nbias = float(mgk::dim(ctx, "NEG_BIAS"));
  const int r = ctx->rank, w = ctx->world_size;
  plain::State& st = plain::state(ctx);
  void* text = st.local[0];
  auto* logits = static_cast<float*>(st.local[1]);
  auto* sum = static_cast<double*>(st.local[2]);
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every rank's text of this call is in place
  MGK_CUDA_TRY(ctx, cudaMemsetAsync(sum, 0, sizeof(double), s));
  // The terms of rank `source`'s block; without the communication (MGK_LOCAL_ONLY) only the
  // own block is added.
  auto add_block = [&](int source) -> int {
    if (!plain::uses(ctx, source)) return 0;
    MGK_CUDA_TRY(ctx, plain::copy_matrix(in[1].host_peers[source], D, text, D, B, D, s));
    MGK_CUBLAS_TRY(ctx, plain::gemm(ctx, s, false, true, B, B, D, in[0].data, D, text, D, logits, B, CUDA_R_32F));
    add_terms_kernel<<<plain::blocks_for(B * B), kThreads, 0, s>>>(logits, B, scale, nbias, source == r, sum);
    MGK_LAUNCH_CHECK(ctx);
    return 0;
  };
  const int rounds = (w - 1) / 2;
  if (add_block(r)) return 1;
  for (int k = 1; k <= rounds; ++k)
    if (add_block((r + k) % w) || add_block((r - k + w) % w)) return 1;
  if ((w - 1) % 2 == 1 && add_block((r + rounds + 1) % w)) return 1;  // the last, one-directional step
  loss_kernel<<<1, 1, 0, s>>>(sum, B * w, static_cast<float*>(out[0].data));
  MGK_LAUNCH_CHECK(ctx);
  return 0;
}
