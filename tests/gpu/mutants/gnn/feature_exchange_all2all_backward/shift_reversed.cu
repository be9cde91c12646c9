// Mutant of tests/gpu/candidates/gnn/feature_exchange_all2all_backward.cu. Class: off by one in a rank offset (the rotation's direction).
// The lists rotated the other way: chunk c comes from rank (r - c) mod W, as its chunk c. Consistent, and
// the same as the statement's order at W = 2; from W = 3 the chunks land in the wrong places.
//
// The plain candidate's description:
// Plain: grad_features zeroed; after a barrier, each received chunk c is read from rank
// s = (r + c) mod W (peer pointers): s's grad_output rows from the start of s's chunk
// (W - c) mod W, row t added (fp32 atomicAdd) into grad_features[seed_inverse_ids[R_c + t]],
// R_c the chunk's first received row. The counts n(s, d) are the statement's formula. Under
// MGK_LOCAL_ONLY only the own chunk is added.
#include "../../../candidates/plain_compute.cuh"

namespace {
struct Counts {
  long long A, B, E, K;
  int W;
  // Rows rank s sends rank d: A + B ((d - s + K) mod W) + E [s even].
  long long n(int s, int d) const { return A + B * (((d - s + K) % W + W) % W) + (s % 2 == 0 ? E : 0); }
};

// out[ids[t]] += src row t, t < rows (rows of h floats).
__global__ void add_rows_kernel(const int64_t* ids, const float* src, int64_t h, int64_t rows, float* out) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < rows * h; i += int64_t(gridDim.x) * blockDim.x)
    atomicAdd(out + ids[i / h] * h + i % h, src[i]);
}
}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) { return plain::setup(ctx, {}); }
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { plain::teardown(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  const int W = ctx->world_size, r = ctx->rank;
  const Counts n{mgk::dim(ctx, "A"), mgk::dim(ctx, "B"), mgk::dim(ctx, "E"), mgk::dim(ctx, "K"), W};
  const int64_t H = mgk::dim(ctx, "H");
  const auto* ids = static_cast<const int64_t*>(in[1].data);
  auto* g = static_cast<float*>(out[0].data);
  MGK_CUDA_TRY(ctx, cudaMemsetAsync(g, 0, mgk::nbytes(out[0]), s));
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every rank's inputs of this call are in place
  int64_t at = 0;                              // chunk c's first received row
  for (int c = 0; c < W; ++c) {
    const int src = (r - c + W) % W;
    const long long rows = n.n(src, r);
    const int k = c;  // the sender's chunk addressed to this rank
    long long first = 0;        // its first row in the sender's grad_output
    for (int kk = 0; kk < k; ++kk) first += n.n(src, (src + kk) % W);
    if (rows > 0 && plain::uses(ctx, src)) {
      add_rows_kernel<<<plain::blocks_for(rows * H), 256, 0, s>>>(
          ids + at, static_cast<const float*>(in[0].host_peers[src]) + first * H, H, rows, g);
      MGK_LAUNCH_CHECK(ctx);
    }
    at += rows;
  }
  return 0;
}
