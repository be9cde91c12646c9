// Mutant of tests/gpu/candidates/recsys/kjt_all2all.cu. Class: off by one in an index (each bag's ids placed after its own length: an inclusive scan where an exclusive one is needed).
// The running offsets are advanced by the bag's length before they are stored, so every
// bag's ids are read and written one bag too late.
//
// The plain candidate's description:
// Plain: after a barrier, every source rank's lengths are copied here (peer pointers). One
// block: thread s walks source s's lengths up to the end of this rank's features, noting
// where each of this rank's features starts in s's values and how many ids it has there;
// thread 0 adds those segments up in the output's order (feature, then source); thread t
// then walks segment t = (f, s) bag by bag, writing lengths_out and where each bag's ids
// start in s's values and in values_out. One thread per bag copies its ids from s's values
// (peer pointers); zeros past the count. Rank d's k_d = 1 + d % 3 features start at o_d =
// k_0 + ... + k_(d-1). Under MGK_LOCAL_ONLY the other ranks' lengths are taken as zero.
#include "../../../candidates/plain_compute.cuh"

namespace {
constexpr int kMaxSegments = 3 * MGK_MAX_WORLD;

// lens: W rows of F B lengths (row s: rank s's). first = o_R, kr = k_R.
__global__ void layout_kernel(const int64_t* lens, int64_t fb, int world, int64_t first, int64_t kr, int64_t b,
                              int64_t* lengths_out, int64_t* from, int64_t* to, int64_t* count) {
  __shared__ int64_t src_at[kMaxSegments];      // [s kr + f]: where segment (f, s) starts in rank s's values
  __shared__ int64_t out_at[kMaxSegments + 1];  // [f W + s]: where it starts in values_out
  const int t = threadIdx.x;
  for (int i = t; i <= kMaxSegments; i += blockDim.x) {
    if (i < kMaxSegments) src_at[i] = 0;
    out_at[i] = 0;
  }
  __syncthreads();
  if (t < world) {
    const int64_t* l = lens + t * fb;
    int64_t at = 0;
    for (int64_t g = 0; g < first + kr; ++g) {
      int64_t seg = 0;
      for (int64_t i = 0; i < b; ++i) seg += l[g * b + i];
      if (g >= first) {
        src_at[t * kr + (g - first)] = at;
        out_at[(g - first) * world + t + 1] = seg;
      }
      at += seg;
    }
  }
  __syncthreads();
  if (t == 0) {
    out_at[0] = 0;
    for (int64_t i = 0; i < kr * world; ++i) out_at[i + 1] += out_at[i];
    *count = out_at[kr * world];
  }
  __syncthreads();
  if (t < kr * world) {
    const int64_t f = t / world;
    const int s = t % world;
    const int64_t* l = lens + s * fb + (first + f) * b;
    int64_t src = src_at[s * kr + f], dst = out_at[t];
    for (int64_t i = 0; i < b; ++i) {
      const int64_t j = int64_t(t) * b + i;  // bag (f, s, i) of the output
      lengths_out[j] = l[i];
      src += l[i];
      dst += l[i];
      from[j] = src;
      to[j] = dst;
    }
  }
}

// Bag j's ids from its source's values (rank (j / B) mod W); places past the capacities are
// never touched (none are when the offsets are right).
__global__ void copy_kernel(void* const* values, const int64_t* lengths_out, const int64_t* from, const int64_t* to,
                            int64_t bags, int world, int64_t b, int64_t in_cap, int64_t out_cap, int64_t* values_out) {
  for (int64_t j = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; j < bags; j += int64_t(gridDim.x) * blockDim.x) {
    const int64_t* src = static_cast<const int64_t*>(values[(j / b) % world]);
    for (int64_t t = 0; t < lengths_out[j]; ++t)
      if (from[j] + t < in_cap && to[j] + t < out_cap) values_out[to[j] + t] = src[from[j] + t];
  }
}

__global__ void tail_kernel(const int64_t* count, int64_t cap, int64_t* values_out) {
  const int64_t n = *count;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < cap; i += int64_t(gridDim.x) * blockDim.x)
    if (i >= n) values_out[i] = 0;
}
}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  const size_t W = ctx->world_size, fb = size_t(mgk::dim(ctx, "F") * mgk::dim(ctx, "B"));
  const size_t bags = size_t(ctx->outputs[0].numel);
  return plain::setup(ctx, {}, {W * fb * 8, bags * 8, bags * 8});
}
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { plain::teardown(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  const int W = ctx->world_size, r = ctx->rank;
  const int64_t B = mgk::dim(ctx, "B"), F = mgk::dim(ctx, "F"), LMAX = mgk::dim(ctx, "LMAX");
  int64_t first = 0;  // o_R
  for (int d = 0; d < r; ++d) first += 1 + d % 3;
  const int64_t kr = 1 + r % 3, bags = kr * W * B, cap = bags * LMAX;
  auto* lens = static_cast<int64_t*>(plain::state(ctx).local[0]);
  auto* from = static_cast<int64_t*>(plain::state(ctx).local[1]);
  auto* to = static_cast<int64_t*>(plain::state(ctx).local[2]);
  auto* lengths_out = static_cast<int64_t*>(out[0].data);
  auto* values_out = static_cast<int64_t*>(out[1].data);
  auto* count = static_cast<int64_t*>(out[2].data);
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every rank's inputs of this call are in place
  for (int src = 0; src < W; ++src) {
    if (plain::uses(ctx, src)) MGK_CUDA_TRY(ctx, simple::copy(in[0].host_peers[src], lens + src * F * B, F * B * 8, s));
    else MGK_CUDA_TRY(ctx, cudaMemsetAsync(lens + src * F * B, 0, size_t(F * B) * 8, s));
  }
  layout_kernel<<<1, 256, 0, s>>>(lens, F * B, W, first, kr, B, lengths_out, from, to, count);
  MGK_LAUNCH_CHECK(ctx);
  copy_kernel<<<plain::blocks_for(bags), 256, 0, s>>>(in[1].peers, lengths_out, from, to, bags, W, B, F * B * LMAX,
                                                      cap, values_out);
  MGK_LAUNCH_CHECK(ctx);
  tail_kernel<<<plain::blocks_for(cap), 256, 0, s>>>(count, cap, values_out);
  MGK_LAUNCH_CHECK(ctx);
  return 0;
}
