// Mutant of tests/gpu/candidates/norms/reducescatter_fused_rmsnorm.cu. Class: a missing term (the weight gamma).
// The normalised mean is written without gamma (the affine part forgotten).
//
// The plain candidate's description:
// Plain: after a barrier, one block per row of this rank's chunk adds the row over every
// rank's x (peer pointers, fp32, rank order), divides by W, and normalises in fp32, rounding
// once; the row is read from the peers twice (mean square, then the output).
#include "../../../candidates/plain_compute.cuh"

namespace {
constexpr int kThreads = 128;

// m[j] of row `row`: the sum over ranks [first, end) of x_s at chunk R, divided by W.
__device__ float mean_over_ranks(void* const* x, int first, int end, int64_t offset, float world) {
  float acc = 0;
  for (int s = first; s < end; ++s) acc += __bfloat162float(static_cast<const __nv_bfloat16*>(x[s])[offset]);
  return acc / world;
}

__global__ void reduce_norm_kernel(void* const* x, int first, int end, int world, int64_t chunk_offset,
                                   const __nv_bfloat16* gamma, __nv_bfloat16* y, int64_t h) {
  __shared__ float part[kThreads];
  const int64_t row = chunk_offset + blockIdx.x * h;
  float acc = 0;
  for (int64_t j = threadIdx.x; j < h; j += kThreads) {
    const float m = mean_over_ranks(x, first, end, row + j, float(world));
    acc += m * m;
  }
  part[threadIdx.x] = acc;
  __syncthreads();
  for (int w = kThreads / 2; w; w /= 2) {
    if (threadIdx.x < w) part[threadIdx.x] += part[threadIdx.x + w];
    __syncthreads();
  }
  const float rms = rsqrtf(part[0] / float(h) + 1e-5f);
  for (int64_t j = threadIdx.x; j < h; j += kThreads)
    y[blockIdx.x * h + j] =
        __float2bfloat16(mean_over_ranks(x, first, end, row + j, float(world)) * rms);
}
}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) { return plain::setup(ctx, {}); }
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { plain::teardown(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  const int64_t rows = mgk::dim(ctx, "ROWS"), h = mgk::dim(ctx, "H");
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every rank's x of this call is in place
  reduce_norm_kernel<<<unsigned(rows), kThreads, 0, s>>>(in[0].peers, plain::first_source(ctx), plain::end_source(ctx),
                                                         ctx->world_size, ctx->rank * rows * h,
                                                         static_cast<const __nv_bfloat16*>(in[1].data),
                                                         static_cast<__nv_bfloat16*>(out[0].data), h);
  MGK_LAUNCH_CHECK(ctx);
  return 0;
}
