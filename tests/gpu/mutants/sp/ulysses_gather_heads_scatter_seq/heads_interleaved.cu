// Mutant of tests/gpu/candidates/sp/ulysses_gather_heads_scatter_seq.cu. Class: a wrong transpose (heads h W + s instead of s H + h).
// The gathered heads interleave the sources (head k from rank k % W) instead of concatenating their blocks.
//
// The plain candidate's description:
// Plain: after a barrier, every output element is loaded from the rank that owns its head,
// at this rank's positions (peer pointers); zero past the end of the sequence. Under
// MGK_LOCAL_ONLY only this rank's heads (the others zeros).
#include "../../../candidates/plain_compute.cuh"

namespace {
// y[b][t][s H + h][d] = x_s[b][r TL + t][h][d], or 0 where r TL + t >= T.
__global__ void gather_kernel(void* const* x, __nv_bfloat16* y, int64_t n, int64_t T, int64_t TL, int64_t H, int64_t D,
                              int world, int rank, int first, int end) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t d = i % D, k = i / D % (world * H), t = i / (D * world * H) % TL, b = i / (D * world * H * TL);
    const int s = int(k % world);
    const int64_t h = k / world, pos = rank * TL + t;
    y[i] = pos < T && s >= first && s < end
               ? static_cast<const __nv_bfloat16*>(x[s])[((b * T + pos) * H + h) * D + d]
               : __float2bfloat16(0.0f);
  }
}
}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) { return plain::setup(ctx, {}); }
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { plain::teardown(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  const int64_t T = in[0].shape[1], H = in[0].shape[2], D = in[0].shape[3], TL = out[0].shape[1], n = out[0].numel;
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every rank's x of this call is in place
  gather_kernel<<<plain::blocks_for(n), 256, 0, s>>>(in[0].peers, static_cast<__nv_bfloat16*>(out[0].data), n, T, TL, H,
                                                     D, ctx->world_size, ctx->rank, plain::first_source(ctx),
                                                     plain::end_source(ctx));
  MGK_LAUNCH_CHECK(ctx);
  return 0;
}
