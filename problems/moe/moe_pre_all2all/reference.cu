// Reference, as ParallelKernelBench's torch code computes it: the routing map from the picks;
// the expert-major permutation (torch's masked_select of token ids per expert) as a CUB stable
// radix sort of the (token, slot) picks by expert; the rows gathered in that order; NCCL's
// all-to-all with equal splits; and the regrouping of the received chunks by local expert,
// done by receiving each chunk straight into its regrouped place (no extra copy).
#include <cub/cub.cuh>

#include <algorithm>
#include <vector>

#include "mgk/reference_kit.h"

namespace {

constexpr int kIds = 8;  // ids are drawn in [0, 8): ParallelKernelBench's experts

int bits_for(int64_t e) {
  int b = 1;
  while ((int64_t(1) << b) < e) ++b;
  return b;
}

// Token t's picks a_t and b_t: keys/tokens of picks 2t, 2t+1 and column t of the routing map.
__global__ void picks_kernel(const int64_t* first, const int64_t* step, int64_t m, int* keys, int64_t* tokens,
                             float* map) {
  for (int64_t t = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; t < m; t += int64_t(gridDim.x) * blockDim.x) {
    const int a = int(first[t]), b = int((first[t] + step[t]) % kIds);
    keys[2 * t] = a, keys[2 * t + 1] = b;
    tokens[2 * t] = t, tokens[2 * t + 1] = t;
    map[int64_t(a) * m + t] = 1.0f;
    map[int64_t(b) * m + t] = 1.0f;
  }
}

// out row j = hidden row idx[j]; 16-byte vectors when a row is a multiple of 8 elements.
template <bool kVec>
__global__ void gather_kernel(const int64_t* idx, int64_t rows, const __nv_bfloat16* src, int64_t n, __nv_bfloat16* out) {
  const int64_t per_row = kVec ? n / 8 : n;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < rows * per_row; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = i / per_row, c = i % per_row;
    if (kVec) reinterpret_cast<uint4*>(out + r * n)[c] = reinterpret_cast<const uint4*>(src + idx[r] * n)[c];
    else out[r * n + c] = src[idx[r] * n + c];
  }
}

// Rank s's expert-major token order, from its regenerated picks (a counting sort by expert,
// tokens ascending within each expert).
std::vector<int64_t> expert_major(const mgk_input_gen& first, const mgk_input_gen& step, int s, int64_t m, int64_t e) {
  std::vector<std::vector<int64_t>> by_expert(static_cast<size_t>(e));
  for (int64_t t = 0; t < m; ++t) {
    const int64_t a = int64_t(mgk::gen_value(first, s, t)), b = (a + int64_t(mgk::gen_value(step, s, t))) % kIds;
    by_expert[size_t(a)].push_back(t);  // each list fills in token order
    by_expert[size_t(b)].push_back(t);
  }
  std::vector<int64_t> order;
  order.reserve(size_t(2 * m));
  for (const auto& v : by_expert) order.insert(order.end(), v.begin(), v.end());
  return order;
}

struct PreAll2All : mgk::Reference {
  using Reference::Reference;
  const int64_t M = dim("M"), N = dim("N"), E = dim("E"), K = dim("K"), L = dim("L"), CH = dim("CH");
  mgk::DeviceBuffer<int> keys;             // [K M] expert of each pick, token-major
  mgk::DeviceBuffer<int> keys_sorted;
  mgk::DeviceBuffer<int64_t> tokens;       // [K M] token of each pick
  mgk::DeviceBuffer<__nv_bfloat16> local;  // [K M, N] this rank's rows, expert-major
  mgk::DeviceBuffer<char> temp;
  size_t temp_bytes = 0;

  int setup() {
    const int64_t picks = K * M;
    MGK_CUDA_TRY(ctx, keys.allocate(picks));
    MGK_CUDA_TRY(ctx, keys_sorted.allocate(picks));
    MGK_CUDA_TRY(ctx, tokens.allocate(picks));
    MGK_CUDA_TRY(ctx, local.allocate(picks * N));
    MGK_CUDA_TRY(ctx, cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, keys.get(), keys_sorted.get(),
                                                      static_cast<const int64_t*>(nullptr),
                                                      static_cast<int64_t*>(nullptr), int(picks), 0, bits_for(E)));
    MGK_CUDA_TRY(ctx, temp.allocate(int64_t(std::max<size_t>(temp_bytes, 16))));
    return 0;
  }

  int run(const mgk_tensor* in, const mgk_tensor* out, cudaStream_t st) {
    const int W = world(), R = rank();
    const int64_t picks = 2 * M;
    auto* map = static_cast<float*>(out[1].data);
    auto* sorted = static_cast<int64_t*>(out[2].data);
    MGK_CUDA_TRY(ctx, cudaMemsetAsync(map, 0, size_t(E * M) * 4, st));
    const int blocks = int(std::min<int64_t>((M + 255) / 256, 4096));
    picks_kernel<<<blocks, 256, 0, st>>>(static_cast<const int64_t*>(in[1].data),
                                         static_cast<const int64_t*>(in[2].data), M, keys, tokens, map);
    MGK_LAUNCH_CHECK(ctx);
    size_t bytes = temp_bytes;  // stable: within an expert the tokens stay ascending
    MGK_CUDA_TRY(ctx, cub::DeviceRadixSort::SortPairs(temp.get(), bytes, keys.get(), keys_sorted.get(), tokens.get(),
                                                      sorted, int(picks), 0, bits_for(E), st));
    const bool vec = N % 8 == 0;
    const int64_t work = picks * (vec ? N / 8 : N);
    const int gblocks = int(std::min<int64_t>((work + 255) / 256, 16384));
    const auto* hidden = static_cast<const __nv_bfloat16*>(in[0].data);
    if (vec) gather_kernel<true><<<gblocks, 256, 0, st>>>(sorted, picks, hidden, N, local);
    else gather_kernel<false><<<gblocks, 256, 0, st>>>(sorted, picks, hidden, N, local);
    MGK_LAUNCH_CHECK(ctx);
    // Rank p gets this rank's rows [p L CH, (p + 1) L CH) as L chunks; chunk l from rank s
    // lands at (l W + s) CH. One send/recv pair per chunk so that each lands in place.
    const size_t chunk = size_t(CH * N);
    auto* dst = static_cast<__nv_bfloat16*>(out[0].data);
    ncclComm_t comm = this->comm();
    if (!comm) {  // bench/compute: the local part alone, its own chunks regrouped
      for (int64_t l = 0; l < L; ++l)
        MGK_CUDA_TRY(ctx, cudaMemcpyAsync(dst + (l * W + R) * chunk, local + (R * L + l) * chunk, chunk * 2,
                                          cudaMemcpyDeviceToDevice, st));
      return 0;
    }
    MGK_NCCL_TRY(ctx, ncclGroupStart());
    for (int p = 0; p < W; ++p)
      for (int64_t l = 0; l < L; ++l) {
        MGK_NCCL_TRY(ctx, ncclSend(local + (p * L + l) * chunk, chunk, ncclBfloat16, p, comm, st));
        MGK_NCCL_TRY(ctx, ncclRecv(dst + (l * W + p) * chunk, chunk, ncclBfloat16, p, comm, st));
      }
    MGK_NCCL_TRY(ctx, ncclGroupEnd());
    return 0;
  }

  // On the host: every rank's expert-major order; this rank's output row ((l W + s) CH + i)
  // is rank s's row (R L CH + l CH + i) of that order, i.e. token order_s[...] of rank s.
  // On the device: the rows copied from the regenerated hidden states, the routing map and
  // this rank's order.
  int oracle(const mgk_oracle_args* a, cudaStream_t st) {
    const int W = world(), R = rank();
    const int64_t M = this->M, N = this->N, picks = 2 * M;  // by value into the device lambdas
    std::vector<int64_t> src(size_t(2 * picks));  // per output row: source rank, source token
    std::vector<int64_t> mine;
    for (int s = 0; s < W; ++s) {
      const std::vector<int64_t> order = expert_major(a->gens[1], a->gens[2], s, M, E);
      if (s == R) mine = order;
      for (int64_t l = 0; l < L; ++l)
        for (int64_t i = 0; i < CH; ++i) {
          const int64_t row = (l * W + s) * CH + i;
          src[size_t(2 * row)] = s;
          src[size_t(2 * row + 1)] = order[size_t(R * L * CH + l * CH + i)];
        }
    }
    mgk::oracle::Scratch scratch(st);
    int64_t* d_src = scratch.get<int64_t>(2 * picks);
    if (!scratch.ok()) return mgk::set_error(ctx, "oracle: out of device memory");
    MGK_CUDA_TRY(ctx, cudaMemcpyAsync(d_src, src.data(), src.size() * 8, cudaMemcpyHostToDevice, st));
    MGK_CUDA_TRY(ctx, cudaMemcpyAsync(a->expected[2], mine.data(), mine.size() * 8, cudaMemcpyHostToDevice, st));
    const mgk_input_gen hidden = a->gens[0], first = a->gens[1], step = a->gens[2];
    auto* rows = static_cast<double*>(a->expected[0]);
    MGK_CUDA_TRY(ctx, mgk::oracle::for_each(
                          picks * N,
                          [=] __device__(int64_t i) {
                            const int64_t row = i / N;
                            rows[i] = mgk::gen_value(hidden, int(d_src[2 * row]), d_src[2 * row + 1] * N + i % N);
                          },
                          st));
    auto* map = static_cast<double*>(a->expected[1]);
    MGK_CUDA_TRY(ctx, mgk::oracle::for_each(
                          E * M,
                          [=] __device__(int64_t i) {
                            const int64_t e = i / M, t = i % M;
                            const int64_t x = int64_t(mgk::gen_value(first, R, t));
                            const int64_t y = (x + int64_t(mgk::gen_value(step, R, t))) % kIds;
                            map[i] = (e == x || e == y) ? 1.0 : 0.0;
                          },
                          st));
    MGK_CUDA_TRY(ctx, cudaStreamSynchronize(st));  // the host vectors must outlive the copies
    return 0;
  }
};

}  // namespace

MGK_REFERENCE(PreAll2All)
