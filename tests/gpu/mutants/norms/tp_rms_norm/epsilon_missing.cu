// Mutant of tests/gpu/candidates/norms/tp_rms_norm.cu. Class: a missing numerical safeguard (epsilon).
// rsqrt(mean square) without + eps: a zero (or tiny) row divides by zero.
//
// The plain candidate's description:
// Plain: after a barrier, each rank writes its rows' sums of squares (fp32) into symmetric
// workspace; after a second barrier each rank adds every rank's sums (rank order) and
// normalises its slice in fp32, rounding once.
#include "../../../candidates/plain_compute.cuh"

namespace {
constexpr int kThreads = 256;

__global__ void sum_squares_kernel(const __nv_bfloat16* x, float* sums, int64_t n) {
  __shared__ float part[kThreads];
  float acc = 0;
  for (int64_t j = threadIdx.x; j < n; j += kThreads) {
    const float v = __bfloat162float(x[blockIdx.x * n + j]);
    acc += v * v;
  }
  part[threadIdx.x] = acc;
  __syncthreads();
  for (int w = kThreads / 2; w; w /= 2) {
    if (threadIdx.x < w) part[threadIdx.x] += part[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) sums[blockIdx.x] = part[0];
}

__global__ void normalize_kernel(const __nv_bfloat16* x, const __nv_bfloat16* w, void* const* sums, int first, int end,
                                 __nv_bfloat16* y, int64_t n, float total) {
  float sum = 0;
  for (int r = first; r < end; ++r) sum += static_cast<const float*>(sums[r])[blockIdx.x];
  const float scale = rsqrtf(sum / total);
  for (int64_t j = threadIdx.x; j < n; j += kThreads)
    y[blockIdx.x * n + j] = __float2bfloat16(__bfloat162float(w[j]) * __bfloat162float(x[blockIdx.x * n + j]) * scale);
}
}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) { return plain::setup(ctx, {size_t(mgk::dim(ctx, "M")) * 4}); }
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { plain::teardown(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  const int64_t M = mgk::dim(ctx, "M"), NL = mgk::dim(ctx, "NL"), N = mgk::dim(ctx, "N");
  const mgk_sym_buffer& sums = plain::state(ctx).sym[0];
  const auto* x = static_cast<const __nv_bfloat16*>(in[0].data);
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // no peer still reads this rank's sums of the last call
  sum_squares_kernel<<<unsigned(M), kThreads, 0, s>>>(x, static_cast<float*>(sums.local), NL);
  MGK_LAUNCH_CHECK(ctx);
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every rank's sums are written
  normalize_kernel<<<unsigned(M), kThreads, 0, s>>>(x, static_cast<const __nv_bfloat16*>(in[1].data), sums.peers,
                                                    plain::first_source(ctx), plain::end_source(ctx),
                                                    static_cast<__nv_bfloat16*>(out[0].data), NL, float(N));
  MGK_LAUNCH_CHECK(ctx);
  return 0;
}
