// Mutant of tests/gpu/candidates/conv/hyena_forward_cp.cu. Class: off by one in a rank offset (the filter rows: row c - r CB of the owner's h, the block's local index, instead of row c).
// The owner slices its channels' filters as rows [0, n_r) of its h, forgetting that its block starts at row r CB (ParallelKernelBench's h[rank * local_groups:...]): every rank but 0 convolves with rank 0's channels' rows.
//
// The plain candidate's description:
// Plain: three phases, a barrier between each two. (1) After a barrier (every rank's inputs of
// this call are in place), rank r gathers z = bf16(x2 * v) of its channels [r CB, r CB + n_r)
// at every global position, in natural order, straight from the rank that holds each
// position (global chunk q lies on rank q < W ? q : 2W - 1 - q, at column 0 or LC there):
// zl[b][cl][t] (fp32, private). (2) A thread per (b, cl, t) adds the causal taps
// h[c][s] zl[t - s], s <= min(t, K - 1), and bias[c] zl[t] in fp32 (its own copies of h and
// bias: rows of its own channels) and rounds once to bf16 into ys[b][cl][t] (symmetric, rows
// of CB). (3) After a barrier, a thread per output (b, j, c) reads y of channel c at global
// position g(j) (r LC + j, or (2W - 1 - r) LC + j - LC) from the owner of c, rank c / CB,
// multiplies by x1[b][c][j] and rounds once into the transposed out[b][j][c].
// Under MGK_LOCAL_ONLY the peers' z and y are zeros.
#include "../../../candidates/plain_compute.cuh"

namespace {
using bf16 = __nv_bfloat16;

__global__ void gather_z_kernel(void* const* x2_peers, void* const* v_peers, float* zl, int first, int end, int64_t rows,
                                int64_t nc, int64_t c0, int64_t C, int64_t LC, int64_t W) {
  const int64_t T2 = 2 * LC, L = W * T2;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < rows * L; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t t = i % L, row = i / L, b = row / nc, c = c0 + row % nc;
    const int64_t q = t / LC;                          // the global chunk of position t
    const int src = int(q < W ? q : 2 * W - 1 - q);    // the rank that holds it
    const int64_t col = (q < W ? 0 : LC) + t % LC;     // its column there
    float z = 0;
    if (src >= first && src < end) {
      const int64_t at = (b * C + c) * T2 + col;
      const float x2 = __bfloat162float(static_cast<const bf16*>(x2_peers[src])[at]);
      const float v = __bfloat162float(static_cast<const bf16*>(v_peers[src])[at]);
      z = __bfloat162float(__float2bfloat16(x2 * v));  // PyTorch's bf16 product
    }
    zl[i] = z;
  }
}

__global__ void conv_kernel(const float* zl, const bf16* h, const bf16* bias, bf16* ys, int64_t rows, int64_t nc,
                            int64_t c0, int64_t CB, int64_t K, int64_t L) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < rows * L; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t t = i % L, row = i / L, b = row / nc, cl = row % nc, c = c0 + cl;
    const float* z = zl + row * L;
    const int64_t taps = t < K - 1 ? t : K - 1;
    float acc = __bfloat162float(bias[c]) * z[t];
    for (int64_t s = 0; s <= taps; ++s) acc += __bfloat162float(h[cl * K + s]) * z[t - s];
    ys[(b * CB + cl) * L + t] = __float2bfloat16(acc);
  }
}

__global__ void gate_kernel(const bf16* x1, void* const* y_peers, bf16* out, int rank, int first, int end, int64_t B,
                            int64_t C, int64_t CB, int64_t LC, int64_t W) {
  const int64_t T2 = 2 * LC, L = W * T2;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < B * T2 * C; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t c = i % C, j = (i / C) % T2, b = i / C / T2;
    const int64_t g = j < LC ? rank * LC + j : (2 * W - 1 - rank) * LC + (j - LC);  // j's global position
    const int owner = int(c / CB);
    float y = 0;
    if (owner >= first && owner < end)
      y = __bfloat162float(static_cast<const bf16*>(y_peers[owner])[(b * CB + c - owner * CB) * L + g]);
    out[i] = __float2bfloat16(__bfloat162float(x1[(b * C + c) * T2 + j]) * y);
  }
}
}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  const int64_t B = mgk::dim(ctx, "B"), CB = mgk::dim(ctx, "CB"), L = mgk::dim(ctx, "L");
  return plain::setup(ctx, {size_t(B * CB * L) * sizeof(bf16)}, {size_t(B * CB * L) * sizeof(float)});
}
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { plain::teardown(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  const int64_t B = mgk::dim(ctx, "B"), C = mgk::dim(ctx, "C"), LC = mgk::dim(ctx, "LC"), K = mgk::dim(ctx, "K"),
                CB = mgk::dim(ctx, "CB"), L = mgk::dim(ctx, "L");
  const int r = ctx->rank, W = ctx->world_size;
  const int64_t c0 = std::min<int64_t>(r * CB, C), nc = std::min<int64_t>(CB, C - c0), rows = B * nc;
  plain::State& st = plain::state(ctx);
  auto* zl = static_cast<float*>(st.local[0]);
  auto* ys = static_cast<bf16*>(st.sym[0].local);
  const int first = plain::first_source(ctx), end = plain::end_source(ctx);
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every rank's inputs of this call are in place
  if (rows > 0) {
    gather_z_kernel<<<plain::blocks_for(rows * L), 256, 0, s>>>(in[1].peers, in[2].peers, zl, first, end, rows, nc, c0,
                                                               C, LC, W);
    MGK_LAUNCH_CHECK(ctx);
    conv_kernel<<<plain::blocks_for(rows * L), 256, 0, s>>>(zl, static_cast<const bf16*>(in[3].data),
                                                           static_cast<const bf16*>(in[4].data), ys, rows, nc, c0, CB,
                                                           K, L);
    MGK_LAUNCH_CHECK(ctx);
  }
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every rank's y of this call is in place
  gate_kernel<<<plain::blocks_for(B * 2 * LC * C), 256, 0, s>>>(static_cast<const bf16*>(in[0].data), st.sym[0].peers,
                                                               static_cast<bf16*>(out[0].data), r, first, end, B, C,
                                                               CB, LC, W);
  MGK_LAUNCH_CHECK(ctx);
  return 0;
}
