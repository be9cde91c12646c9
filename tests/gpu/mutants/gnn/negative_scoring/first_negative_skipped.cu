// Mutant of tests/gpu/candidates/gnn/negative_scoring.cu. Class: off by one in an index (column 0 taken for the positive, as in ParallelKernelBench's [pos | neg] matrix).
// ParallelKernelBench ranks column 0 of the concatenated scores [pos | neg]; here neg has only the
// K negatives, and skipping its column 0 drops one of them.
//
// The plain candidate's description:
// Plain: after a barrier, one warp per output row g walks the ranks' row counts
// P_s = P + PD ((s + S) % 3) to find the rank s and row i that g is, reads rank s's positive
// score and its K negatives through the peer pointers, and counts the negatives whose bf16
// sigmoid is above the positive's: ranks[g] = 1 + that count. Every rank ranks every row.
#include "../../../candidates/plain_compute.cuh"

namespace {
// The logistic function in fp32, rounded once to bf16 (nearest, ties to even).
__device__ float sig_bf16(float x) { return __bfloat162float(__float2bfloat16_rn(1.0f / (1.0f + expf(-x)))); }

__global__ void rank_kernel(void* const* pos, void* const* neg, int64_t p, int64_t dp, int64_t s0, int64_t k,
                            int64_t total, int world, int first, int end, int64_t* out) {
  const int lane = threadIdx.x % 32;
  const int64_t warps = int64_t(gridDim.x) * blockDim.x / 32;
  for (int64_t g = (blockIdx.x * int64_t(blockDim.x) + threadIdx.x) / 32; g < total; g += warps) {
    int s = 0;
    int64_t i = g;
    while (s + 1 < world && i >= p + dp * ((s + s0) % 3)) {
      i -= p + dp * ((s + s0) % 3);
      ++s;
    }
    // Without the communication (MGK_LOCAL_ONLY) another rank's scores read as zeros.
    const bool used = s >= first && s < end;
    const auto* ps = static_cast<const __nv_bfloat16*>(pos[s]);
    const auto* ns = static_cast<const __nv_bfloat16*>(neg[s]) + i * k;
    const float sp = sig_bf16(used ? __bfloat162float(ps[i]) : 0.0f);
    unsigned count = 0;
    for (int64_t j = 1 + lane; j < k; j += 32) count += sig_bf16(used ? __bfloat162float(ns[j]) : 0.0f) > sp;
    count = __reduce_add_sync(0xFFFFFFFFu, count);
    if (lane == 0) out[g] = 1 + int64_t(count);
  }
}
}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) { return plain::setup(ctx, {}); }
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { plain::teardown(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  const int64_t P = mgk::dim(ctx, "P"), PD = mgk::dim(ctx, "PD"), S = mgk::dim(ctx, "S"), K = mgk::dim(ctx, "K");
  const int64_t total = out[0].numel;
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every rank's scores of this call are in place
  rank_kernel<<<plain::blocks_for(total * 32), 256, 0, s>>>(in[0].peers, in[1].peers, P, PD, S, K, total,
                                                            ctx->world_size, plain::first_source(ctx),
                                                            plain::end_source(ctx), static_cast<int64_t*>(out[0].data));
  MGK_LAUNCH_CHECK(ctx);
  return 0;
}
