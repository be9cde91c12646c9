// Mutant of tests/gpu/candidates/sp/ulysses_gather_seq_scatter_heads.cu. Class: a wrong group layout (strided instead of contiguous heads).
// Rank r's heads taken as r, r + W, r + 2W, ... (round-robin) instead of the contiguous block r HL .. r HL + HL - 1.
//
// The plain candidate's description:
// Plain: after a barrier, every output element is loaded from the rank that owns its
// position, at this rank's head group (peer pointers). Under MGK_LOCAL_ONLY only this rank's
// positions (the others zeros).
#include "../../../candidates/plain_compute.cuh"

namespace {
// y[b][s T + t][h][d] = x_s[b][t][r HL + h][d].
__global__ void gather_kernel(void* const* x, __nv_bfloat16* y, int64_t n, int64_t T, int64_t H, int64_t HL, int64_t D,
                              int world, int rank, int first, int end) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t d = i % D, h = i / D % HL, p = i / (D * HL) % (world * T), b = i / (D * HL * world * T);
    const int s = int(p / T);
    const int64_t t = p % T;
    y[i] = s >= first && s < end ? static_cast<const __nv_bfloat16*>(x[s])[((b * T + t) * H + h * world + rank) * D + d]
                                 : __float2bfloat16(0.0f);
  }
}
}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) { return plain::setup(ctx, {}); }
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { plain::teardown(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  const int64_t T = in[0].shape[1], H = in[0].shape[2], D = in[0].shape[3], n = out[0].numel;
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every rank's x of this call is in place
  gather_kernel<<<plain::blocks_for(n), 256, 0, s>>>(in[0].peers, static_cast<__nv_bfloat16*>(out[0].data), n, T, H,
                                                     H / ctx->world_size, D, ctx->world_size, ctx->rank,
                                                     plain::first_source(ctx), plain::end_source(ctx));
  MGK_LAUNCH_CHECK(ctx);
  return 0;
}
