// Mutant of tests/gpu/candidates/dp/deepmd_kalman_filter_optimizer.cu. Class: off by one in a rank offset (the gathered weights).
// weights_all[s] takes rank s + 1's weights (mod W): the slot index shifted by one, as a ring all-gather that forgets where its own slot is.
//
// The plain candidate's description:
// Plain: K_i = P_i H_i for this rank's blocks (a warp per row of P, fp64), one block adds
// lambda + H_i . K_i over the blocks into this rank's tmp slot (symmetric); after a barrier
// every rank adds every rank's slot in rank order and takes A = 1 / tmp, writes its w' =
// w + A e K into its weights slot (symmetric) and updates its P in place, P' = (P - A K K^T) /
// lambda, one thread per element; after a second barrier every rank's weights slot is pulled
// into weights_all in rank order.
#include "../../../candidates/plain_compute.cuh"

namespace {
constexpr double kLambda = 0.98;
constexpr int kThreads = 256;

// K[q] = sum over k of P[q, k] H[i, k] for every row q = i B + j of this rank's P.
__global__ void k_kernel(const double* P, const double* H, double* K, int64_t rows, int64_t B) {
  const int lane = threadIdx.x % 32;
  const int64_t warps = int64_t(gridDim.x) * (blockDim.x / 32);
  for (int64_t q = blockIdx.x * int64_t(blockDim.x / 32) + threadIdx.x / 32; q < rows; q += warps) {
    const double* h = H + (q / B) * B;
    double acc = 0;
    for (int64_t k = lane; k < B; k += 32) acc += P[q * B + k] * h[k];
    for (int o = 16; o; o /= 2) acc += __shfl_xor_sync(0xffffffffu, acc, o);
    if (lane == 0) K[q] = acc;
  }
}

// *slot = sum over this rank's blocks i of (lambda + H_i . K_i): one block of kThreads.
__global__ void local_tmp_kernel(const double* H, const double* K, int64_t NB, int64_t B, double* slot) {
  __shared__ double part[kThreads];
  double tmp = 0;
  for (int64_t i = 0; i < NB; ++i) {
    double acc = 0;
    for (int64_t j = threadIdx.x; j < B; j += kThreads) acc += H[i * B + j] * K[i * B + j];
    part[threadIdx.x] = acc;
    __syncthreads();
    for (int w = kThreads / 2; w; w /= 2) {
      if (threadIdx.x < w) part[threadIdx.x] += part[threadIdx.x + w];
      __syncthreads();
    }
    tmp += kLambda + part[0];
    __syncthreads();
  }
  if (threadIdx.x == 0) *slot = tmp;
}

// A = 1 / (the sum of the tmp slots of ranks [first, end), in rank order).
__device__ double gain(void* const* slots, int first, int end) {
  double tmp = 0;
  for (int s = first; s < end; ++s) tmp += *static_cast<const double*>(slots[s]);
  return 1.0 / tmp;
}

// w_new[q] = w[q] + A e K[q].
__global__ void weights_kernel(void* const* slots, int first, int end, const double* w, const double* err,
                               const double* K, double* w_new, int64_t n) {
  const double A = gain(slots, first, end);
  for (int64_t q = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; q < n; q += int64_t(gridDim.x) * blockDim.x)
    w_new[q] = w[q] + A * err[0] * K[q];
}

// P[i, j, k] = (P[i, j, k] - A K_i[j] K_i[k]) / lambda, in place.
__global__ void update_kernel(void* const* slots, int first, int end, double* P, const double* K, int64_t NB,
                              int64_t B) {
  const double A = gain(slots, first, end);
  for (int64_t x = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; x < NB * B * B;
       x += int64_t(gridDim.x) * blockDim.x) {
    const int64_t q = x / B, k = x % B;  // q = i B + j
    P[x] = (P[x] - A * K[q] * K[(q / B) * B + k]) / kLambda;
  }
}

// weights_all[s, :] = rank s's updated weights (zeros for the ranks not used).
__global__ void gather_kernel(void* const* slots, int world, int first, int end, double* w_all, int64_t n) {
  for (int64_t x = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; x < world * n;
       x += int64_t(gridDim.x) * blockDim.x) {
    const int s = int(x / n);
    // BUG: rank s + 1's slot (mod W) for rank s.
    w_all[x] = s >= first && s < end ? static_cast<const double*>(slots[(s + 1) % world])[x % n] : 0.0;
  }
}
}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  const size_t n = size_t(mgk::dim(ctx, "NB") * mgk::dim(ctx, "B"));
  // Symmetric: [0] this rank's tmp, [1] its updated weights. Private: K.
  return plain::setup(ctx, {sizeof(double), n * sizeof(double)}, {n * sizeof(double)});
}
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { plain::teardown(ctx); }

// in: H, error, weights, P. out: weights_all, P_updated (P's own buffer).
MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  plain::State& st = plain::state(ctx);
  const int64_t NB = mgk::dim(ctx, "NB"), B = mgk::dim(ctx, "B"), n = NB * B;
  const int first = plain::first_source(ctx), end = plain::end_source(ctx);
  const auto* H = static_cast<const double*>(in[0].data);
  const auto* err = static_cast<const double*>(in[1].data);
  const auto* w = static_cast<const double*>(in[2].data);
  auto* P = static_cast<double*>(out[1].data);
  auto* K = static_cast<double*>(st.local[0]);
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // no peer still reads this rank's slots of the last call
  k_kernel<<<plain::blocks_for(n * 32), kThreads, 0, s>>>(P, H, K, n, B);
  MGK_LAUNCH_CHECK(ctx);
  local_tmp_kernel<<<1, kThreads, 0, s>>>(H, K, NB, B, static_cast<double*>(st.sym[0].local));
  MGK_LAUNCH_CHECK(ctx);
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every rank's tmp is in its slot
  weights_kernel<<<plain::blocks_for(n), kThreads, 0, s>>>(st.sym[0].peers, first, end, w, err, K,
                                                           static_cast<double*>(st.sym[1].local), n);
  MGK_LAUNCH_CHECK(ctx);
  update_kernel<<<plain::blocks_for(n * B), kThreads, 0, s>>>(st.sym[0].peers, first, end, P, K, NB, B);
  MGK_LAUNCH_CHECK(ctx);
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every rank's updated weights are in its slot
  gather_kernel<<<plain::blocks_for(ctx->world_size * n), kThreads, 0, s>>>(
      st.sym[1].peers, ctx->world_size, first, end, static_cast<double*>(out[0].data), n);
  MGK_LAUNCH_CHECK(ctx);
  return 0;
}
