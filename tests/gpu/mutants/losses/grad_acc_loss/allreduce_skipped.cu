// Mutant of tests/gpu/candidates/losses/grad_acc_loss.cu. Class: the communication skipped.
// Each rank sums only its own term: the all-reduce of loss * local dropped, since one rank's loss is close to the global one.
//
// The plain candidate's description:
// Plain: after a barrier, a one-thread kernel writes t_r = loss * local (fp32, not rounded)
// into symmetric workspace; after a second barrier every rank adds the ranks' t in rank
// order (fp32), rounds once, and computes the normalised loss and the gradient in fp32.
#include "../../../candidates/plain_compute.cuh"

namespace {
__global__ void term_kernel(const __nv_bfloat16* loss, const int64_t* local, float* t) {
  *t = *local == 0 ? 0.0f : __bfloat162float(*loss) * float(*local);
}

__global__ void finish_kernel(void* const* terms, int first, int end, const int64_t* local, const int64_t* global,
                              const __nv_bfloat16* grad_norm, const __nv_bfloat16* grad_sum,
                              __nv_bfloat16* normalized, __nv_bfloat16* loss_sum, __nv_bfloat16* grad) {
  float sum = 0;
  for (int s = first; s < end; ++s) sum += *static_cast<const float*>(terms[s]);
  const float n = float(*local), g = float(*global);
  *loss_sum = __float2bfloat16(sum);
  *normalized = __float2bfloat16(sum / g);
  *grad = __float2bfloat16(__bfloat162float(*grad_norm) * n / g + __bfloat162float(*grad_sum) * n);
}
}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) { return plain::setup(ctx, {sizeof(float)}); }
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { plain::teardown(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  const mgk_sym_buffer& terms = plain::state(ctx).sym[0];
  const auto* local = static_cast<const int64_t*>(in[1].data);
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // no peer still reads this rank's term of the last call
  term_kernel<<<1, 1, 0, s>>>(static_cast<const __nv_bfloat16*>(in[0].data), local, static_cast<float*>(terms.local));
  MGK_LAUNCH_CHECK(ctx);
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every rank's term is written
  finish_kernel<<<1, 1, 0, s>>>(terms.peers, ctx->rank, ctx->rank + 1, local,
                                static_cast<const int64_t*>(in[2].data), static_cast<const __nv_bfloat16*>(in[3].data),
                                static_cast<const __nv_bfloat16*>(in[4].data), static_cast<__nv_bfloat16*>(out[0].data),
                                static_cast<__nv_bfloat16*>(out[1].data), static_cast<__nv_bfloat16*>(out[2].data));
  MGK_LAUNCH_CHECK(ctx);
  return 0;
}
