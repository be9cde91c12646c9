// Mutant of tests/gpu/candidates/losses/importance_sampling_loss.cu. Class: wrong elementwise function (sign).
// The log-ratio taken as old_logprob - logprob (the KL's direction mixed up with the ratio's): ratio becomes 1 / ratio.
//
// The plain candidate's description:
// Plain: logits in fp32 on cuBLAS (no bf16 rounding), one block per token for its
// cross-entropy and per-token terms in fp32; after a barrier one block writes this rank's
// count, sums, min and max into symmetric workspace; after a second barrier every rank
// combines the ranks' values in rank order and divides by the total count.
#include "../../../candidates/plain_compute.cuh"

namespace {
constexpr int kThreads = 256;
constexpr int kSlots = 7;  // count, sum pg, sum ratio, sum k3, sum ce, min ratio, max ratio

__global__ void token_kernel(const float* logits, int64_t v, const int64_t* labels, const __nv_bfloat16* old_logprobs,
                             const __nv_bfloat16* advantages, __nv_bfloat16* logprobs, __nv_bfloat16* token_loss,
                             float4* terms) {
  __shared__ float part[kThreads];
  const int64_t t = blockIdx.x, label = labels[t];
  if (label < 0) {  // ignored: zeros, and out of every sum, min and max
    if (threadIdx.x == 0)
      logprobs[t] = __float2bfloat16(0.0f), token_loss[t] = __float2bfloat16(0.0f), terms[t] = make_float4(0, 0, 0, 0);
    return;
  }
  const float* l = logits + t * v;
  float top = -INFINITY;
  for (int64_t j = threadIdx.x; j < v; j += kThreads) top = fmaxf(top, l[j]);
  part[threadIdx.x] = top;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int i = 1; i < kThreads; ++i) top = fmaxf(top, part[i]);
    part[0] = top;
  }
  __syncthreads();
  top = part[0];
  __syncthreads();
  float sum = 0;
  for (int64_t j = threadIdx.x; j < v; j += kThreads) sum += expf(l[j] - top);
  part[threadIdx.x] = sum;
  __syncthreads();
  if (threadIdx.x != 0) return;
  for (int i = 1; i < kThreads; ++i) sum += part[i];
  const float ce = top + logf(sum) - l[label], adv = __bfloat162float(advantages[t]);
  const float delta = fminf(fmaxf(__bfloat162float(old_logprobs[t]) + ce, -20.0f), 20.0f), ratio = expf(delta);
  logprobs[t] = __float2bfloat16(-ce);
  token_loss[t] = __float2bfloat16(-ratio * adv);
  terms[t] = make_float4(-ratio * adv, ratio, ratio - delta - 1.0f, ce);
}

// One thread: this rank's count, sums, min and max over its valid tokens.
__global__ void rank_kernel(const int64_t* labels, const float4* terms, int64_t m, float* out) {
  float acc[kSlots] = {0, 0, 0, 0, 0, INFINITY, -INFINITY};
  for (int64_t t = 0; t < m; ++t) {
    if (labels[t] < 0) continue;
    const float4 x = terms[t];
    acc[0] += 1, acc[1] += x.x, acc[2] += x.y, acc[3] += x.z, acc[4] += x.w;
    acc[5] = fminf(acc[5], x.y), acc[6] = fmaxf(acc[6], x.y);
  }
  for (int q = 0; q < kSlots; ++q) out[q] = acc[q];
}

__global__ void finish_kernel(void* const* ranks, int first, int end, float* loss, float* metrics) {
  float g[kSlots] = {0, 0, 0, 0, 0, INFINITY, -INFINITY};
  for (int s = first; s < end; ++s) {
    const float* x = static_cast<const float*>(ranks[s]);
    for (int q = 0; q < 5; ++q) g[q] += x[q];
    g[5] = fminf(g[5], x[5]), g[6] = fmaxf(g[6], x[6]);
  }
  const float n = fmaxf(g[0], 1.0f);
  *loss = g[1] / n;  // true_pg: the surrogate terms cancel
  metrics[0] = g[2] / n, metrics[1] = g[5], metrics[2] = g[6], metrics[3] = g[3] / n, metrics[4] = g[4] / n;
}
}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  const int64_t M = mgk::dim(ctx, "M"), V = mgk::dim(ctx, "V");
  return plain::setup(ctx, {kSlots * sizeof(float)}, {size_t(M * V) * sizeof(float), size_t(M) * sizeof(float4)});
}
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { plain::teardown(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  plain::State& st = plain::state(ctx);
  const int64_t M = mgk::dim(ctx, "M"), N = mgk::dim(ctx, "N"), V = mgk::dim(ctx, "V");
  auto* logits = static_cast<float*>(st.local[0]);
  auto* terms = static_cast<float4*>(st.local[1]);
  const auto* labels = static_cast<const int64_t*>(in[2].data);
  MGK_CUBLAS_TRY(ctx, plain::gemm(ctx, s, false, true, M, V, N, in[0].data, N, in[1].data, N, logits, V, CUDA_R_32F));
  token_kernel<<<unsigned(M), kThreads, 0, s>>>(logits, V, labels, static_cast<const __nv_bfloat16*>(in[3].data),
                                                static_cast<const __nv_bfloat16*>(in[4].data),
                                                static_cast<__nv_bfloat16*>(out[1].data),
                                                static_cast<__nv_bfloat16*>(out[2].data), terms);
  MGK_LAUNCH_CHECK(ctx);
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // no peer still reads this rank's values of the last call
  rank_kernel<<<1, 1, 0, s>>>(labels, terms, M, static_cast<float*>(st.sym[0].local));
  MGK_LAUNCH_CHECK(ctx);
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every rank's values are written
  finish_kernel<<<1, 1, 0, s>>>(st.sym[0].peers, plain::first_source(ctx), plain::end_source(ctx),
                                static_cast<float*>(out[0].data), static_cast<float*>(out[3].data));
  MGK_LAUNCH_CHECK(ctx);
  return 0;
}
