// Mutant of tests/gpu/candidates/tp/combined_sharded_gemms.cu. Class: a wrong transpose.
// W2 [F, H] read as if stored [H, F] (op T): the nn.Linear weight convention (out x in) carried over to a problem whose W2 is in x out.
//
// The plain candidate's description:
// Plain: after a barrier, copy rows [r ML, (r+1) ML) of every rank's x (peer pointers) into
// their columns of a private x_rows; h = x_rows W1 on cuBLAS kept in fp32, a = silu(h)
// rounded once to bf16, y = a W2 on cuBLAS. (The reference rounds h to bf16 as well: both
// must pass.)
#include "../../../candidates/plain_compute.cuh"

namespace {
__global__ void silu_kernel(const float* h, __nv_bfloat16* a, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    a[i] = __float2bfloat16(h[i] / (1.0f + expf(-h[i])));
}
}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  const size_t ML = mgk::dim(ctx, "ML"), H = mgk::dim(ctx, "H"), F = mgk::dim(ctx, "F");
  return plain::setup(ctx, {}, {ML * H * 2, ML * F * 4, ML * F * 2});
}
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { plain::teardown(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  const int64_t ML = mgk::dim(ctx, "ML"), HL = mgk::dim(ctx, "HL"), H = mgk::dim(ctx, "H"), F = mgk::dim(ctx, "F");
  auto& local = plain::state(ctx).local;
  auto* rows = static_cast<__nv_bfloat16*>(local[0]);
  auto* h = static_cast<float*>(local[1]);
  auto* act = static_cast<__nv_bfloat16*>(local[2]);
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every rank's x of this call is in place
  MGK_CUDA_TRY(ctx, plain::gather_columns(ctx, in[0], ctx->rank * ML, ML, HL, rows, s));
  MGK_CUBLAS_TRY(ctx, plain::gemm(ctx, s, false, false, ML, F, H, rows, H, in[1].data, F, h, F, CUDA_R_32F));
  silu_kernel<<<plain::blocks_for(ML * F), 256, 0, s>>>(h, act, ML * F);
  MGK_LAUNCH_CHECK(ctx);
  MGK_CUBLAS_TRY(ctx, plain::gemm(ctx, s, false, true, ML, H, F, act, F, in[2].data, F, out[0].data, H));
  return 0;
}
