// Mutant of tests/gpu/candidates/quant/fp8_allgather_params.cu. Class: off by one in an index (the history rolled the wrong way).
// The amax history is shifted right with the new amax first (torch.roll(hist, 1)), instead of left with the new amax last.
// The plain candidate with bug 1 of ../fp8_plain_mutable.cuh (its shared header).
//
// The plain candidate's description:
// Plain: this rank's max |shard| (per-block partials, then one thread), the rolled history
// and the scale (one thread), every element's e4m3 round trip (CUDA's non-saturating
// round-to-nearest-even conversion, as float8_e4m3fn casts) into symmetric workspace; after a
// barrier every rank copies every rank's reconstructed shard into its slot of the output.
#define FP8_MUTANT 1
#include "../fp8_plain_mutable.cuh"

namespace {
using fp8_plain::kThreads;
constexpr int kPartials = 256;
}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  return plain::setup(ctx, {size_t(mgk::dim(ctx, "P")) * sizeof(__nv_bfloat16)}, {kPartials * sizeof(float), sizeof(float)});
}
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { plain::teardown(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  plain::State& st = plain::state(ctx);
  const int64_t P = in[0].numel;
  const auto* x = static_cast<const __nv_bfloat16*>(in[0].data);
  auto* full = static_cast<__nv_bfloat16*>(out[0].data);
  auto* partial = static_cast<float*>(st.local[0]);
  auto* scale = static_cast<float*>(st.local[1]);
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // no peer still reads this rank's workspace of the last call
  fp8_plain::amax_partial_kernel<kPartials><<<kPartials, kThreads, 0, s>>>(x, P, partial);
  MGK_LAUNCH_CHECK(ctx);
  fp8_plain::history_kernel<kPartials><<<1, 1, 0, s>>>(partial, static_cast<const __nv_bfloat16*>(in[1].data), int(in[1].numel),
                                 static_cast<__nv_bfloat16*>(out[1].data), scale);
  MGK_LAUNCH_CHECK(ctx);
  fp8_plain::round_trip_kernel<<<plain::blocks_for(P), 256, 0, s>>>(x, static_cast<__nv_bfloat16*>(st.sym[0].local), P, scale);
  MGK_LAUNCH_CHECK(ctx);
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every rank's round trip is written
  // Without communication the other ranks' slots are zeros.
  for (int r = 0; r < ctx->world_size; ++r)
    MGK_CUDA_TRY(ctx, plain::copy_from(ctx, r, st.sym[0].host_peers[r], P, full + r * P, P, 1, P, s));
  return 0;
}
