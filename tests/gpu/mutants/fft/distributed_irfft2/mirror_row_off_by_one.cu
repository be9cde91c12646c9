// Mutant of tests/gpu/candidates/fft/distributed_irfft2.cu. Class: off by one in an index (the mirrored row H - 1 - k, not (H - k) mod H).
// The flip along H taken as a reversal of the rows (row k to H - 1 - k), where the frequency -k is row
// H - k and row 0 is its own mirror.
//
// The plain candidate's description:
// Plain: after a barrier (every rank's rows of this call are in place), one (b, c) plane at a
// time: the full spectrum Z (H x WD) built from every rank's rows of the half-spectrum (peer
// pointers) by the statement's Hermitian extension, Z[h][w] = X[h][w] for w < NF and
// conj(X[(H - h) mod H][WD - w]) for w >= NF (row h of X on rank h / HL, its row h % HL
// there); Z's complex inverse 2-D transform on cuFFT (one C2C plan, unnormalised); the real
// part of this rank's columns [r WL, (r + 1) WL) times 1 / sqrt(H WD) into out. Every rank
// transforms the whole plane. Under MGK_LOCAL_ONLY the peers' rows are zeros.
#include <cufft.h>

#include "../../../candidates/plain_compute.cuh"

namespace {
cufftHandle plan;  // the 2-D C2C plan, H x WD, of this preset
bool planned = false;

// z = the Hermitian extension of plane bc of X (rows from every rank's x; zeros for a rank
// not used).
__global__ void extend_kernel(void* const* x_peers, int first, int end, int64_t bc, int64_t H, int64_t HL,
                              int64_t WD, int64_t NF, float2* z) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < H * WD; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t h = i / WD, w = i % WD;
    const bool mirror = w >= NF;
    const int64_t sh = mirror ? H - 1 - h : h, sw = mirror ? WD - w : w;  // the element of X it comes from
    const int src = int(sh / HL);
    float2 v = make_float2(0.0f, 0.0f);
    if (src >= first && src < end) v = static_cast<const float2*>(x_peers[src])[(bc * HL + sh % HL) * NF + sw];
    if (mirror) v.y = -v.y;  // conjugate
    z[i] = v;
  }
}

// out[h][j] = Re z[h][col0 + j] * scale, h < H, j < WL.
__global__ void real_columns_kernel(const float2* z, float* out, int64_t H, int64_t WD, int64_t WL, int64_t col0,
                                    float scale) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < H * WL; i += int64_t(gridDim.x) * blockDim.x)
    out[i] = z[(i / WL) * WD + col0 + i % WL].x * scale;
}
}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  const int64_t H = mgk::dim(ctx, "H"), WD = mgk::dim(ctx, "WD");
  if (plain::setup(ctx, {}, {size_t(H * WD) * sizeof(float2)})) return 1;
  if (cufftPlan2d(&plan, int(H), int(WD), CUFFT_C2C) != CUFFT_SUCCESS) return mgk::set_error(ctx, "cufftPlan2d failed");
  planned = true;
  return 0;
}
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) {
  if (planned) cufftDestroy(plan);
  planned = false;
  plain::teardown(ctx);
}

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  const int64_t B = mgk::dim(ctx, "B"), C = mgk::dim(ctx, "C"), H = mgk::dim(ctx, "H"), WD = mgk::dim(ctx, "WD"),
                HL = mgk::dim(ctx, "HL"), WL = mgk::dim(ctx, "WL"), NF = mgk::dim(ctx, "NF");
  auto* z = static_cast<float2*>(plain::state(ctx).local[0]);
  auto* y = static_cast<float*>(out[0].data);
  const float scale = float(1.0 / sqrt(double(H) * double(WD)));
  if (cufftSetStream(plan, s) != CUFFT_SUCCESS) return mgk::set_error(ctx, "cufftSetStream failed");
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every rank's x of this call is in place
  for (int64_t bc = 0; bc < B * C; ++bc) {
    extend_kernel<<<plain::blocks_for(H * WD), 256, 0, s>>>(in[0].peers, plain::first_source(ctx),
                                                            plain::end_source(ctx), bc, H, HL, WD, NF, z);
    MGK_LAUNCH_CHECK(ctx);
    if (cufftExecC2C(plan, z, z, CUFFT_INVERSE) != CUFFT_SUCCESS) return mgk::set_error(ctx, "cufftExecC2C failed");
    real_columns_kernel<<<plain::blocks_for(H * WL), 256, 0, s>>>(z, y + bc * H * WL, H, WD, WL, ctx->rank * WL, scale);
    MGK_LAUNCH_CHECK(ctx);
  }
  return 0;
}
