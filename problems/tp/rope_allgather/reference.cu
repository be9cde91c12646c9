// Reference: a RoPE kernel rotates this rank's q and k, with PyTorch's bf16 roundings
// (each product rounded, then the sum), into this rank's slots of two all-gather buffers;
// NCCL all-gathers both in place (one group), and strided copies put each rank's positions
// in their place along the sequence of q_out and k_out.
#include <algorithm>

#include "mgk/oracle_gemm.cuh"
#include "mgk/reference.h"

namespace {

struct State {
  void* gathered[2] = {nullptr, nullptr};  // q, k: W slots of B x SL x NH x D
  ~State() {
    for (void* p : gathered) cudaFree(p);
  }
};

State& state(mgk_ctx* ctx) { return *static_cast<State*>(ctx->state); }

// Elements per all-gather slot, padded to 256 bytes.
int64_t slot_elems(const mgk_tensor& local) { return (local.numel + 127) / 128 * 128; }

__device__ inline __nv_bfloat16 rope(__nv_bfloat16 x, __nv_bfloat16 partner, bool lower, __nv_bfloat16 c,
                                     __nv_bfloat16 s) {
  // rotate_half: the lower half takes the negated upper half, the upper half the lower one.
  const __nv_bfloat16 rot = lower ? __hneg(partner) : partner;
  return __hadd(__hmul(x, c), __hmul(rot, s));  // bf16 ops: each rounds, as in PyTorch
}

// out[(b, j, h, d)] = rope of x (B x SL x NH x D) with cos/sin (B x SL x D).
__global__ void rope_kernel(const __nv_bfloat16* x, const __nv_bfloat16* cos, const __nv_bfloat16* sin,
                            __nv_bfloat16* out, int64_t n, int nh, int d_head) {
  const int half = d_head / 2;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const int d = int(i % d_head);
    const int64_t token = i / d_head / nh;  // b * SL + j
    const bool lower = d < half;
    const __nv_bfloat16 partner = x[i + (lower ? half : -half)];
    out[i] = rope(x[i], partner, lower, cos[token * d_head + d], sin[token * d_head + d]);
  }
}

}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  auto* s = new State;
  ctx->state = s;
  for (int t = 0; t < 2; ++t)
    MGK_CUDA_TRY(ctx, cudaMalloc(&s->gathered[t], size_t(ctx->world_size * slot_elems(ctx->inputs[t])) * 2));
  return 0;
}

MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { delete &state(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t st) {
  State& s = state(ctx);
  const int64_t B = mgk::dim(ctx, "B"), SL = mgk::dim(ctx, "SL");
  const int NH = int(mgk::dim(ctx, "NH")), D = int(mgk::dim(ctx, "D"));
  const int64_t n = in[0].numel, slot = slot_elems(in[0]);
  auto slot_of = [&](int t, int r) { return static_cast<__nv_bfloat16*>(s.gathered[t]) + r * slot; };
  const int blocks = int(std::min<int64_t>((n + 255) / 256, 16384));
  for (int t = 0; t < 2; ++t) {
    rope_kernel<<<blocks, 256, 0, st>>>(static_cast<const __nv_bfloat16*>(in[t].data),
                                        static_cast<const __nv_bfloat16*>(in[2].data),
                                        static_cast<const __nv_bfloat16*>(in[3].data), slot_of(t, ctx->rank), n, NH, D);
    MGK_LAUNCH_CHECK(ctx);
  }
  MGK_NCCL_STEP(ctx, ncclGroupStart());
  for (int t = 0; t < 2; ++t)
    MGK_NCCL_STEP(ctx, ncclAllGather(slot_of(t, ctx->rank), s.gathered[t], slot, ncclBfloat16, mgk::comm(ctx), st));
  MGK_NCCL_STEP(ctx, ncclGroupEnd());
  // Batch b of rank r's positions goes to positions [r SL, (r+1) SL) of batch b.
  for (int t = 0; t < 2; ++t)
    MGK_CUDA_TRY(ctx, mgk::blocks_side_by_side(s.gathered[t], slot * 2, out[t].data, B, SL * NH * D, 2,
                                               ctx->world_size, st));
  return 0;
}

// Every output element from the owning rank's regenerated inputs, exactly:
// x cos + rotate_half(x) sin. The reference rounds both products and their sum to bf16, so
// S = |x cos| + |rotate_half(x) sin| + |x cos + rotate_half(x) sin|.
MGK_EXPORT int mgk_oracle(mgk_ctx* ctx, const mgk_oracle_args* a, cudaStream_t st) {
  const int64_t SL = mgk::dim(ctx, "SL"), S = mgk::dim(ctx, "S"), NH = mgk::dim(ctx, "NH"), D = mgk::dim(ctx, "D");
  const mgk_input_gen gc = a->gens[2], gs = a->gens[3];
  for (int t = 0; t < 2; ++t) {
    const mgk_input_gen gx = a->gens[t];
    auto* expected = static_cast<double*>(a->expected[t]);
    float* scale = a->scale[t];
    MGK_CUDA_TRY(ctx, mgk::oracle::for_each(
                          a->outputs[t].numel,
                          [=] __device__(int64_t i) {
                            const int64_t d = i % D, h = i / D % NH, pos = i / D / NH % S, b = i / D / NH / S;
                            const int r = int(pos / SL);
                            const int64_t token = b * SL + pos % SL, at = (token * NH + h) * D + d;
                            const int64_t half = D / 2;
                            const bool lower = d < half;
                            const double x = mgk::gen_value(gx, r, at);
                            const double partner = mgk::gen_value(gx, r, at + (lower ? half : -half));
                            const double rot = lower ? -partner : partner;
                            const double p = x * mgk::gen_value(gc, r, token * D + d);
                            const double q = rot * mgk::gen_value(gs, r, token * D + d);
                            expected[i] = p + q;
                            scale[i] = float(fabs(p) + fabs(q) + fabs(p + q));
                          },
                          st));
  }
  return 0;
}
