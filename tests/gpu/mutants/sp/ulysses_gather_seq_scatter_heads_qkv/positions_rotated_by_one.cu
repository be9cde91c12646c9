// Mutant of tests/gpu/candidates/sp/ulysses_gather_seq_scatter_heads_qkv.cu. Class: off by one in a rank offset.
// Position block s is read from rank s + 1 (mod W).
//
// The plain candidate's description:
// Plain: after a barrier, every output element is loaded from the rank that owns its
// position, at this rank's heads of q, k or v (peer pointers). Under MGK_LOCAL_ONLY only this
// rank's positions (the others zeros).
#include "../../../candidates/plain_compute.cuh"

namespace {
// y[b][s T + t][j C + c] = qkv_s[b][t][j H D + r C + c], C = H D / W.
__global__ void gather_kernel(void* const* x, __nv_bfloat16* y, int64_t n, int64_t T, int64_t HD, int world, int rank,
                              int first, int end) {
  const int64_t C = HD / world;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t k = i % (3 * C), p = i / (3 * C) % (world * T), b = i / (3 * C * world * T);
    const int s = int((p / T + 1) % world);
    const int64_t t = p % T, j = k / C, c = k % C;
    y[i] = s >= first && s < end
               ? static_cast<const __nv_bfloat16*>(x[s])[(b * T + t) * 3 * HD + j * HD + rank * C + c]
               : __float2bfloat16(0.0f);
  }
}
}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) { return plain::setup(ctx, {}); }
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { plain::teardown(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  const int64_t T = in[0].shape[1], HD = in[0].shape[2] / 3, n = out[0].numel;
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every rank's qkv of this call is in place
  gather_kernel<<<plain::blocks_for(n), 256, 0, s>>>(in[0].peers, static_cast<__nv_bfloat16*>(out[0].data), n, T, HD,
                                                     ctx->world_size, ctx->rank, plain::first_source(ctx),
                                                     plain::end_source(ctx));
  MGK_LAUNCH_CHECK(ctx);
  return 0;
}
