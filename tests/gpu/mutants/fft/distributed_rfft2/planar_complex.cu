// Mutant of tests/gpu/candidates/fft/distributed_rfft2.cu. Class: a wrong transpose (the complex output planar: every real part, then every imaginary part).
// out written as two planes, [B, HL, NF] real parts then [B, HL, NF] imaginary parts, where the statement
// (and cufftComplex) interleave (re, im) per element.
//
// The plain candidate's description:
// Plain: after a barrier (every rank's slab of this call is in place), one batch b at a time:
// every rank's column slab of x[b] (peer pointers) copied side by side into the whole H x WD
// field (rank s's at columns [s WL, (s + 1) WL)), the field's rfft2 on cuFFT (one 2-D R2C
// plan, unnormalised: H x NF complex values), and this rank's rows [r HL, (r + 1) HL) of it
// times 1 / sqrt(H WD) into out as (re, im) pairs. Every rank transforms the whole field.
// Under MGK_LOCAL_ONLY the peers' slabs are zeros.
#include <cufft.h>

#include "../../../candidates/plain_compute.cuh"

namespace {
cufftHandle plan;  // the 2-D R2C plan, H x WD, of this preset
bool planned = false;

// full[h][col0 + j] = slab[h][j] (zeros when slab is null), h < H, j < WL.
__global__ void place_slab_kernel(const float* slab, float* full, int64_t H, int64_t WL, int64_t WD, int64_t col0) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < H * WL; i += int64_t(gridDim.x) * blockDim.x)
    full[(i / WL) * WD + col0 + i % WL] = slab ? slab[i] : 0.0f;
}

// out row kl = spectrum row row0 + kl times scale, for kl < rows: (re, im) pairs.
__global__ void rows_out_kernel(const float2* spec, float* re, float* im, int64_t rows, int64_t NF, int64_t row0,
                                float scale) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < rows * NF;
       i += int64_t(gridDim.x) * blockDim.x) {
    const float2 v = spec[row0 * NF + i];
    re[i] = v.x * scale;
    im[i] = v.y * scale;
  }
}
}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  const int64_t H = mgk::dim(ctx, "H"), WD = mgk::dim(ctx, "WD"), NF = mgk::dim(ctx, "NF");
  if (plain::setup(ctx, {}, {size_t(H * WD) * sizeof(float), size_t(H * NF) * sizeof(float2)})) return 1;
  if (cufftPlan2d(&plan, int(H), int(WD), CUFFT_R2C) != CUFFT_SUCCESS) return mgk::set_error(ctx, "cufftPlan2d failed");
  planned = true;
  return 0;
}
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) {
  if (planned) cufftDestroy(plan);
  planned = false;
  plain::teardown(ctx);
}

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  const int64_t B = mgk::dim(ctx, "B"), H = mgk::dim(ctx, "H"), WD = mgk::dim(ctx, "WD"), HL = mgk::dim(ctx, "HL"),
                WL = mgk::dim(ctx, "WL"), NF = mgk::dim(ctx, "NF");
  auto* full = static_cast<float*>(plain::state(ctx).local[0]);
  auto* spec = static_cast<float2*>(plain::state(ctx).local[1]);
  auto* y = static_cast<float*>(out[0].data);
  const float scale = float(1.0 / sqrt(double(H) * double(WD)));
  if (cufftSetStream(plan, s) != CUFFT_SUCCESS) return mgk::set_error(ctx, "cufftSetStream failed");
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every rank's x of this call is in place
  for (int64_t b = 0; b < B; ++b) {
    for (int src = 0; src < ctx->world_size; ++src) {
      const auto* peer = static_cast<const float*>(in[0].host_peers[src]);
      const float* slab = plain::uses(ctx, src) ? peer + b * H * WL : nullptr;  // zeros without communication
      place_slab_kernel<<<plain::blocks_for(H * WL), 256, 0, s>>>(slab, full, H, WL, WD, src * WL);
      MGK_LAUNCH_CHECK(ctx);
    }
    if (cufftExecR2C(plan, full, spec) != CUFFT_SUCCESS) return mgk::set_error(ctx, "cufftExecR2C failed");
    rows_out_kernel<<<plain::blocks_for(HL * NF), 256, 0, s>>>(spec, y + b * HL * NF, y + (B + b) * HL * NF, HL, NF,
                                                               ctx->rank * HL, scale);
    MGK_LAUNCH_CHECK(ctx);
  }
  return 0;
}
