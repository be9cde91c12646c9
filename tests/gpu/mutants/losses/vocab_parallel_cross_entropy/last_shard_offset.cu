// Mutant of tests/gpu/candidates/losses/vocab_parallel_cross_entropy.cu. Class: off by one in a rank offset (the last, shorter shard's first column).
// A rank's first column is its rank times its own width, R * width, not R * VL: the same for equal
// shards, but the last rank's shard at `odd` is shorter, so its columns are misplaced.
//
// The plain candidate's description:
// Plain: after a barrier, one block per token reads this rank's shard of the token's logits
// twice in fp32: its max m_r, then s_r = sum exp(x - m_r); the owner of the target column
// t = (13 i + 7) mod V also stores the target's logit (others 0). The three numbers go to
// symmetric workspace. After a second barrier every rank combines, per token, all ranks'
// numbers through the peer pointers: m = max m_r, Z = sum s_r exp(m_r - m), x_t = sum of
// the stored target logits, loss = log Z + m - x_t in fp32, rounded once to bf16.
#include "../../../candidates/plain_compute.cuh"

namespace {
constexpr int kThreads = 256;

// The block's max (kMax) or sum of v; every thread gets it.
template <bool kMax>
__device__ float block_reduce(float v) {
  __shared__ float vals[kThreads];
  vals[threadIdx.x] = v;
  __syncthreads();
  for (int w = kThreads / 2; w; w /= 2) {
    if (threadIdx.x < w) vals[threadIdx.x] = kMax ? fmaxf(vals[threadIdx.x], vals[threadIdx.x + w])
                                                  : vals[threadIdx.x] + vals[threadIdx.x + w];
    __syncthreads();
  }
  const float total = vals[0];
  __syncthreads();
  return total;
}

// One block per token i of this rank's shard (columns [lo, lo + width) of V): part[i] = m_r,
// part[T + i] = s_r, part[2 T + i] = the target's logit if this rank owns it, else 0.
__global__ void shard_kernel(const __nv_bfloat16* logits, int64_t t_count, int64_t width, int64_t lo, int64_t v,
                             float* part) {
  const int64_t i = blockIdx.x;
  const __nv_bfloat16* row = logits + i * width;
  float m = -INFINITY;
  for (int64_t j = threadIdx.x; j < width; j += kThreads) m = fmaxf(m, __bfloat162float(row[j]));
  m = block_reduce<true>(m);
  float s = 0;
  for (int64_t j = threadIdx.x; j < width; j += kThreads) s += expf(__bfloat162float(row[j]) - m);
  s = block_reduce<false>(s);
  if (threadIdx.x == 0) {
    const int64_t t = (13 * i + 7) % v;
    part[i] = m;
    part[t_count + i] = s;
    part[2 * t_count + i] = t >= lo && t < lo + width ? __bfloat162float(row[t - lo]) : 0.0f;
  }
}

// One thread per token: combines the parts of ranks [first, end).
__global__ void combine_kernel(void* const* parts, int first, int end, int64_t t_count, __nv_bfloat16* loss) {
  const int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i >= t_count) return;
  float m = -INFINITY;
  for (int r = first; r < end; ++r) m = fmaxf(m, static_cast<const float*>(parts[r])[i]);
  float z = 0, xt = 0;
  for (int r = first; r < end; ++r) {
    const float* p = static_cast<const float*>(parts[r]);
    z += p[t_count + i] * expf(p[i] - m);
    xt += p[2 * t_count + i];
  }
  loss[i] = __float2bfloat16(logf(z) + (m - xt));
}
}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  return plain::setup(ctx, {3 * sizeof(float) * size_t(mgk::dim(ctx, "T"))});
}
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { plain::teardown(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  const int64_t t_count = mgk::dim(ctx, "T"), vl = mgk::dim(ctx, "VL"), v = mgk::dim(ctx, "V");
  const int64_t width = std::min(vl, v - ctx->rank * vl), lo = ctx->rank * width;
  const mgk_sym_buffer& parts = plain::state(ctx).sym[0];
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // no peer still reads this rank's parts of the last call
  shard_kernel<<<unsigned(t_count), kThreads, 0, s>>>(static_cast<const __nv_bfloat16*>(in[0].data), t_count, width,
                                                      lo, v, static_cast<float*>(parts.local));
  MGK_LAUNCH_CHECK(ctx);
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every rank's parts are written
  combine_kernel<<<unsigned((t_count + kThreads - 1) / kThreads), kThreads, 0, s>>>(
      parts.peers, plain::first_source(ctx), plain::end_source(ctx), t_count, static_cast<__nv_bfloat16*>(out[0].data));
  MGK_LAUNCH_CHECK(ctx);
  return 0;
}
