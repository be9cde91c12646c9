// Mutant of tests/gpu/candidates/moe/moe_post_all2all.cu. Class: off by one in a rank offset (the holder's slot, not this rank's).
// The row is read at slot (l W + p) of holder p instead of (l W + R): the holder's own index used for the sender's slot.
//
// The plain candidate's description:
// Plain: one block finds where each of this rank's picks sits in its expert-major order (a
// thread per expert counts, thread 0 takes the prefix sums, each thread walks its tokens);
// after a barrier every output element pulls its two rows from the ranks holding them and
// adds the weighted rows in fp32, rounding once. A last barrier keeps the peers' expert
// outputs in place until every rank has read them. MGK_LOCAL_ONLY: rows held by the other
// ranks are zeros.
#include "../../../candidates/plain_compute.cuh"

namespace {
__device__ void pair(const int64_t* first, const int64_t* step, int64_t t, int64_t* lo, int64_t* hi) {
  const int64_t a = first[t], b = (first[t] + step[t]) % 8;
  *lo = a < b ? a : b;
  *hi = a < b ? b : a;
}

// pos[2t + k] = position of token t under its k-th (ascending) expert in the expert-major order.
__global__ void position_kernel(const int64_t* first, const int64_t* step, int64_t m, int e_count, int64_t* pos) {
  extern __shared__ int64_t offset[];  // [E + 1]
  for (int e = threadIdx.x; e < e_count; e += blockDim.x) {
    int64_t c = 0;
    for (int64_t t = 0; t < m; ++t) {
      int64_t lo, hi;
      pair(first, step, t, &lo, &hi);
      c += (lo == e) + (hi == e);
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
      int64_t lo, hi;
      pair(first, step, t, &lo, &hi);
      if (lo == e) pos[2 * t] = at++;
      if (hi == e) pos[2 * t + 1] = at++;
    }
  }
}

// Position j of this rank's order is held by rank j / (L CH), at its row (l W + R) CH + j mod CH.
__global__ void combine_kernel(void* const* y, const int64_t* pos, const __nv_bfloat16* w, int first_src, int end_src,
                               int world, int rank, int64_t L, int64_t CH, int64_t m, int64_t n, __nv_bfloat16* out) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < m * n; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t t = i / n, c = i % n;
    float acc = 0;
    for (int k = 0; k < 2; ++k) {
      const int64_t j = pos[2 * t + k], l = (j % (L * CH)) / CH;
      const int p = int(j / (L * CH));
      if (p < first_src || p >= end_src) continue;
      const __nv_bfloat16 v = static_cast<const __nv_bfloat16*>(y[p])[((l * world + p) * CH + j % CH) * n + c];
      acc += __bfloat162float(w[2 * t + k]) * __bfloat162float(v);
    }
    out[i] = __float2bfloat16(acc);
  }
}
}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) { return plain::setup(ctx, {}, {size_t(2 * mgk::dim(ctx, "M")) * 8}); }
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { plain::teardown(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  plain::State& st = plain::state(ctx);
  const int64_t M = mgk::dim(ctx, "M"), N = mgk::dim(ctx, "N"), E = mgk::dim(ctx, "E"), L = mgk::dim(ctx, "L"),
                CH = mgk::dim(ctx, "CH");
  auto* pos = static_cast<int64_t*>(st.local[0]);
  position_kernel<<<1, 256, size_t(E + 1) * 8, s>>>(static_cast<const int64_t*>(in[1].data),
                                                    static_cast<const int64_t*>(in[2].data), M, int(E), pos);
  MGK_LAUNCH_CHECK(ctx);
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every rank's expert outputs are in place
  combine_kernel<<<plain::blocks_for(M * N), 256, 0, s>>>(
      in[0].peers, pos, static_cast<const __nv_bfloat16*>(in[3].data), plain::first_source(ctx), plain::end_source(ctx),
      ctx->world_size, ctx->rank, L, CH, M, N, static_cast<__nv_bfloat16*>(out[0].data));
  MGK_LAUNCH_CHECK(ctx);
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // no peer reads this rank's expert outputs any more
  return 0;
}
