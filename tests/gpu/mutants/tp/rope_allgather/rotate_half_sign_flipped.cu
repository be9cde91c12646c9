// Mutant of tests/gpu/candidates/tp/rope_allgather.cu. Class: wrong elementwise function (sign).
// rotate_half written as (x2, -x1) instead of (-x2, x1): the rotation in the other direction.
//
// The plain candidate's description:
// Plain: after a barrier, every rank computes every output element from the owning rank's
// q or k and cos/sin (peer pointers), in fp32, rounded once. (The reference rounds each
// product too: both must pass.)
#include "../../../candidates/plain_compute.cuh"

namespace {
struct Peers {
  void* const* x;
  void* const* cos;
  void* const* sin;
};

__global__ void rope_kernel(Peers p, __nv_bfloat16* out, int64_t n, int64_t SL, int64_t S, int64_t NH, int64_t D,
                            int first, int end) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t d = i % D, h = i / D % NH, pos = i / D / NH % S, b = i / D / NH / S, half = D / 2;
    const int r = int(pos / SL);
    if (r < first || r >= end) {
      out[i] = __float2bfloat16(0.0f);
      continue;
    }
    const int64_t token = b * SL + pos % SL, at = (token * NH + h) * D + d;
    const auto* x = static_cast<const __nv_bfloat16*>(p.x[r]);
    const float rot = d < half ? __bfloat162float(x[at + half]) : -__bfloat162float(x[at - half]);
    const float c = __bfloat162float(static_cast<const __nv_bfloat16*>(p.cos[r])[token * D + d]);
    const float s = __bfloat162float(static_cast<const __nv_bfloat16*>(p.sin[r])[token * D + d]);
    out[i] = __float2bfloat16(__bfloat162float(x[at]) * c + rot * s);
  }
}
}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) { return plain::setup(ctx, {}); }
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { plain::teardown(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  const int64_t SL = mgk::dim(ctx, "SL"), S = mgk::dim(ctx, "S"), NH = mgk::dim(ctx, "NH"), D = mgk::dim(ctx, "D");
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every rank's inputs of this call are in place
  for (int t = 0; t < 2; ++t) {
    const int64_t n = out[t].numel;
    rope_kernel<<<plain::blocks_for(n), 256, 0, s>>>(Peers{in[t].peers, in[2].peers, in[3].peers},
                                                     static_cast<__nv_bfloat16*>(out[t].data), n, SL, S, NH, D,
                                                     plain::first_source(ctx), plain::end_source(ctx));
    MGK_LAUNCH_CHECK(ctx);
  }
  return 0;
}
