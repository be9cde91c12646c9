// Reference: ParallelKernelBench's ring attention over every rank (rank r holds positions
// [r S, (r+1) S) of the sequence): ring::Ring of ../ring_common.cuh, NCCL send/recv of K and V
// along the ring on a second stream, cuDNN fused attention per block returning its
// log-sum-exp, an fp32 merge kernel.
#include "../ring_common.cuh"

namespace {

struct State {
  ring::Ring ring;
};

State& state(mgk_ctx* ctx) { return *static_cast<State*>(ctx->state); }

}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  auto* s = new State;
  ctx->state = s;
  return s->ring.setup(ctx, mgk::dim(ctx, "B"), mgk::dim(ctx, "S"), mgk::dim(ctx, "H"), mgk::dim(ctx, "D"),
                       ctx->world_size);
}

MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { delete &state(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t st) {
  return state(ctx).ring.run(ctx, mgk::comm(ctx), ctx->rank, ctx->world_size, in[0].data, in[1].data, in[2].data,
                             static_cast<__nv_bfloat16*>(out[0].data), st);
}

// The exact causal attention of this rank's queries over the whole sequence's K and V
// (ring::attention_oracle), from the regenerated inputs.
MGK_EXPORT int mgk_oracle(mgk_ctx* ctx, const mgk_oracle_args* a, cudaStream_t st) {
  namespace o = mgk::oracle;
  const int64_t B = mgk::dim(ctx, "B"), S = mgk::dim(ctx, "S"), T = mgk::dim(ctx, "T"), H = mgk::dim(ctx, "H"),
                D = mgk::dim(ctx, "D");
  if (D > 128) return mgk::set_error(ctx, "oracle: D = %lld > 128", (long long)D);
  o::Scratch scratch(st);
  double *q = scratch.get<double>(B * S * H * D), *k = scratch.get<double>(B * T * H * D),
         *v = scratch.get<double>(B * T * H * D);
  if (!scratch.ok()) return mgk::set_error(ctx, "oracle: out of device memory");
  const mgk_input_gen gq = a->gens[0], gk = a->gens[1], gv = a->gens[2];
  const int rank = ctx->rank;
  // K and V of the whole sequence: position j is rank j / S's position j % S.
  MGK_CUDA_TRY(ctx, o::for_each(
                        B * T * H * D,
                        [=] __device__(int64_t e) {
                          const int64_t c = e % D, h = (e / D) % H, j = (e / (D * H)) % T, b = e / (D * H * T);
                          const int64_t local = ((b * S + j % S) * H + h) * D + c;
                          k[e] = mgk::gen_value(gk, int(j / S), local);
                          v[e] = mgk::gen_value(gv, int(j / S), local);
                          if (j / S == rank) q[local] = mgk::gen_value(gq, rank, local);
                        },
                        st));
  MGK_CUDA_TRY(ctx, ring::launch_attention_oracle(q, k, v, nullptr, nullptr, nullptr,
                                                  static_cast<double*>(a->expected[0]), a->scale[0], rank, B, S, T,
                                                  H, D, st));
  return 0;
}
