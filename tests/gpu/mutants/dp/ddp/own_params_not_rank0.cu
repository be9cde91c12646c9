// Mutant of tests/gpu/candidates/dp/ddp.cu. Class: the communication skipped where inputs happen to agree.
// Each rank starts from its own parameters instead of rank 0's: the initial broadcast dropped, as if every copy were identical.
//
// The plain candidate's description:
// Plain: after a barrier, rank 0's parameters pulled from its symmetric inputs (the
// broadcast), this rank's gradient in fp32 on cuBLAS into symmetric memory, a barrier, then
// Adam in fp32 on the mean of every rank's gradient pulled from peers (the all-reduce).
#include "../../../candidates/plain_mlp.cuh"

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  const plain_mlp::Dims d = plain_mlp::dims(ctx);
  return plain::setup(ctx, {size_t(d.numel()) * 4}, plain_mlp::local_bytes(d));
}
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { plain::teardown(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  const plain_mlp::Dims d = plain_mlp::dims(ctx);
  auto& st = plain::state(ctx);
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every rank's inputs are in place, last call's pulls done
  if (int e = plain_mlp::load_params(ctx, d, in, 2, ctx->rank, s)) return e;
  if (int e = plain_mlp::gradient(ctx, d, in[0].data, in[1].data, static_cast<float*>(st.sym[0].local), s)) return e;
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every rank's gradient is complete
  plain_mlp::adam<<<plain::blocks_for(d.numel()), 256, 0, s>>>(
      st.sym[0].peers, plain::first_source(ctx), plain::end_source(ctx), ctx->world_size,
      static_cast<const __nv_bfloat16*>(st.local[0]), 0, d.numel(), d.bc1(), d.bc2(), true,
      plain_mlp::params_of(d, out, 0), plain_mlp::params_of(d, out, 4), plain_mlp::params_of(d, out, 8), nullptr,
      nullptr, nullptr);
  MGK_LAUNCH_CHECK(ctx);
  return 0;
}
