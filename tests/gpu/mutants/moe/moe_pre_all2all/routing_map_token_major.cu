// Mutant of tests/gpu/candidates/moe/moe_pre_all2all.cu. Class: a wrong transpose (the routing map [M, E] instead of [E, M]).
// The routing map written token-major (row t, column e) where the statement lays it out expert-major.
//
// The plain candidate's description:
// Plain: each rank builds its routing map and its expert-major token order (one block: a
// thread per expert counts, thread 0 takes the prefix sums, each thread lists its tokens in
// order) into its symmetric sorted_indices; after a barrier every output row is pulled from
// the source rank's hidden states through that rank's order. A last barrier keeps the peers'
// inputs and orders in place until every rank has read them. MGK_LOCAL_ONLY: rows from the
// other ranks are zeros.
#include "../../../candidates/plain_compute.cuh"

namespace {
__device__ void picks(const int64_t* first, const int64_t* step, int64_t t, int64_t* a, int64_t* b) {
  *a = first[t];
  *b = (first[t] + step[t]) % 8;
}

__global__ void order_kernel(const int64_t* first, const int64_t* step, int64_t m, int e_count, int64_t* sorted) {
  extern __shared__ int64_t offset[];  // [E + 1]
  for (int e = threadIdx.x; e < e_count; e += blockDim.x) {
    int64_t c = 0;
    for (int64_t t = 0; t < m; ++t) {
      int64_t a, b;
      picks(first, step, t, &a, &b);
      c += (a == e) + (b == e);
    }
    offset[e + 1] = c;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    offset[0] = 0;
    for (int e = 0; e < e_count; ++e) offset[e + 1] += offset[e];
  }
  __syncthreads();
  for (int e = threadIdx.x; e < e_count; e += blockDim.x) {
    int64_t at = offset[e];
    for (int64_t t = 0; t < m; ++t) {
      int64_t a, b;
      picks(first, step, t, &a, &b);
      if (a == e || b == e) sorted[at++] = t;
    }
  }
}

__global__ void map_kernel(const int64_t* first, const int64_t* step, int64_t m, int64_t e_count, float* map) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < e_count * m; i += int64_t(gridDim.x) * blockDim.x) {
    int64_t a, b;
    picks(first, step, i % m, &a, &b);
    map[(i % m) * e_count + i / m] = (i / m == a || i / m == b) ? 1.0f : 0.0f;
  }
}

// Output row j = (l W + s) CH + i is token sorted_s[R L CH + l CH + i] of rank s.
__global__ void gather_kernel(void* const* hidden, void* const* sorted, int first_src, int end_src, int world, int rank,
                              int64_t L, int64_t CH, int64_t n, int64_t rows, __nv_bfloat16* out) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < rows * n; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t j = i / n, l = j / (world * CH), c = j % CH;
    const int s = int((j / CH) % world);
    if (s < first_src || s >= end_src) {
      out[i] = __float2bfloat16(0.0f);
      continue;
    }
    const int64_t token = static_cast<const int64_t*>(sorted[s])[rank * L * CH + l * CH + c];
    out[i] = static_cast<const __nv_bfloat16*>(hidden[s])[token * n + i % n];
  }
}
}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) { return plain::setup(ctx, {}); }
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { plain::teardown(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  const int64_t M = mgk::dim(ctx, "M"), N = mgk::dim(ctx, "N"), E = mgk::dim(ctx, "E"), L = mgk::dim(ctx, "L"),
                CH = mgk::dim(ctx, "CH");
  const auto* first = static_cast<const int64_t*>(in[1].data);
  const auto* step = static_cast<const int64_t*>(in[2].data);
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));
  order_kernel<<<1, 256, size_t(E + 1) * 8, s>>>(first, step, M, int(E), static_cast<int64_t*>(out[2].data));
  MGK_LAUNCH_CHECK(ctx);
  map_kernel<<<plain::blocks_for(E * M), 256, 0, s>>>(first, step, M, E, static_cast<float*>(out[1].data));
  MGK_LAUNCH_CHECK(ctx);
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every rank's order is written
  gather_kernel<<<plain::blocks_for(2 * M * N), 256, 0, s>>>(in[0].peers, out[2].peers, plain::first_source(ctx),
                                                             plain::end_source(ctx), ctx->world_size, ctx->rank, L, CH,
                                                             N, 2 * M, static_cast<__nv_bfloat16*>(out[0].data));
  MGK_LAUNCH_CHECK(ctx);
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // no peer reads this rank's inputs or order any more
  return 0;
}
