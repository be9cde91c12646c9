// Mutant of tests/gpu/candidates/conv/hyena_conv1d_boundary_exchange.cu. Class: a missing numerical safeguard (the zero padding before the sequence's start).
// The exchange written as a ring: rank 0 takes its first chunk's halo from rank W - 1 as every other rank takes it from rank r - 1, where the causal convolution pads the start of the sequence with zeros.
//
// The plain candidate's description:
// Plain: after a barrier (every rank's x of this call is in place), one thread per output
// element adds its 7 taps in fp32 and rounds once. A tap before the start of its chunk reads
// the last 6 columns of the chunk that precedes it in the global sequence, straight from the
// rank that holds it (x is symmetric): for the first chunk (global chunk r) rank r - 1's
// first chunk, nothing on rank 0 (zeros: the sequence starts there); for the second chunk
// (global chunk 2W - 1 - r) rank r + 1's second chunk, and on the last rank its own first
// chunk (global chunk W - 1 precedes chunk W).
#include "../../../candidates/plain_compute.cuh"

namespace {
constexpr int kTaps = 7, kHalo = kTaps - 1;

__global__ void conv_kernel(void* const* x_peers, const __nv_bfloat16* w, __nv_bfloat16* y, int rank, int world,
                            int first, int end, int64_t rows, int64_t C, int64_t L) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < rows * 2 * L;
       i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t row = i / (2 * L), j = i % (2 * L), c = row % C;
    const int h = j >= L;  // 0: the first chunk (global r), 1: the second (global 2W - 1 - r)
    const int64_t p = j - h * L;
    // The chunk before this one: on rank `src` (-1: none, zeros), at column `col0` there.
    int src;
    int64_t col0;
    if (h == 0) {
      src = (rank - 1 + world) % world, col0 = 0;  // rank r - 1's first chunk, around the ring
    } else if (rank == world - 1) {
      src = rank, col0 = 0;  // this rank's own first chunk
    } else {
      src = rank + 1, col0 = L;  // rank r + 1's second chunk
    }
    if (src >= 0 && (src < first || src >= end)) src = -1;  // MGK_LOCAL_ONLY: peers' data absent
    const auto* own = static_cast<const __nv_bfloat16*>(x_peers[rank]) + row * 2 * L + h * L;
    const int64_t tail = col0 + L - kHalo;  // the first of that chunk's last 6 columns
    float acc = 0;
    for (int k = 0; k < kTaps; ++k) {
      const int64_t q = p - kHalo + k;  // the tap's column in this chunk; < 0: in the chunk before
      float v = 0;
      if (q >= 0)
        v = __bfloat162float(own[q]);
      else if (src >= 0)
        v = __bfloat162float(static_cast<const __nv_bfloat16*>(x_peers[src])[row * 2 * L + tail + (q + kHalo)]);
      acc += __bfloat162float(w[c * kTaps + k]) * v;
    }
    y[i] = __float2bfloat16(acc);
  }
}
}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) { return plain::setup(ctx, {}); }
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { plain::teardown(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  const int64_t B = mgk::dim(ctx, "B"), C = mgk::dim(ctx, "C"), L = mgk::dim(ctx, "L");
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every rank's x of this call is in place
  conv_kernel<<<plain::blocks_for(B * C * 2 * L), 256, 0, s>>>(in[0].peers, static_cast<const __nv_bfloat16*>(in[1].data),
                                                               static_cast<__nv_bfloat16*>(out[0].data), ctx->rank,
                                                               ctx->world_size, plain::first_source(ctx),
                                                               plain::end_source(ctx), B * C, C, L);
  MGK_LAUNCH_CHECK(ctx);
  return 0;
}
