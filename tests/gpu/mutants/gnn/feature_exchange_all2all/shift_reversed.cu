// Mutant of tests/gpu/candidates/gnn/feature_exchange_all2all.cu. Class: off by one in a rank offset (the rotation's direction).
// The lists rotated the other way: chunk c comes from rank (r - c) mod W, as its chunk c. Consistent, and
// the same as the statement's order at W = 2; from W = 3 the chunks land in the wrong places.
//
// The plain candidate's description:
// Plain: after a barrier, each chunk c of the output is pulled from rank s = (r + c) mod W
// (peer pointers): its rows are s's gathered rows from the start of s's chunk (W - c) mod W,
// each the local_features row of s that s's seed_inverse_ids names. The counts n(s, d) are
// the statement's formula. Under MGK_LOCAL_ONLY only the own chunk (the others zeros).
#include "../../../candidates/plain_compute.cuh"

namespace {
struct Counts {
  long long A, B, E, K;
  int W;
  // Rows rank s sends rank d: A + B ((d - s + K) mod W) + E [s even].
  long long n(int s, int d) const { return A + B * (((d - s + K) % W + W) % W) + (s % 2 == 0 ? E : 0); }
};

// out row t = table row ids[t] (the id clamped to the table: a no-op on valid ids), t < rows.
__global__ void pull_rows_kernel(const int64_t* ids, const __nv_bfloat16* table, int64_t f, int64_t h, int64_t rows,
                                 __nv_bfloat16* out) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < rows * h; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t t = i / h;
    const int64_t id = ids[t] < 0 ? 0 : (ids[t] >= f ? f - 1 : ids[t]);
    out[i] = table[id * h + i % h];
  }
}
}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) { return plain::setup(ctx, {}); }
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { plain::teardown(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  const int W = ctx->world_size, r = ctx->rank;
  const Counts n{mgk::dim(ctx, "A"), mgk::dim(ctx, "B"), mgk::dim(ctx, "E"), mgk::dim(ctx, "K"), W};
  const int64_t H = mgk::dim(ctx, "H"), F = mgk::dim(ctx, "F");
  auto* y = static_cast<__nv_bfloat16*>(out[0].data);
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every rank's inputs of this call are in place
  int64_t at = 0;                              // chunk c's first output row
  for (int c = 0; c < W; ++c) {
    const int src = (r - c + W) % W;
    const long long rows = n.n(src, r);
    const int k = c;  // the sender's chunk addressed to this rank
    long long first = 0;        // its first row among the sender's gathered rows
    for (int kk = 0; kk < k; ++kk) first += n.n(src, (src + kk) % W);
    if (rows > 0) {
      if (plain::uses(ctx, src)) {
        pull_rows_kernel<<<plain::blocks_for(rows * H), 256, 0, s>>>(
            static_cast<const int64_t*>(in[1].host_peers[src]) + first,
            static_cast<const __nv_bfloat16*>(in[0].host_peers[src]), F, H, rows, y + at * H);
        MGK_LAUNCH_CHECK(ctx);
      } else {
        MGK_CUDA_TRY(ctx, plain::zero_matrix(y + at * H, H, rows, H, s));
      }
    }
    at += rows;
  }
  return 0;
}
