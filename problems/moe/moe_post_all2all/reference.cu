// Reference, as ParallelKernelBench's torch code computes it: the chunks regrouped back and
// sent home by NCCL (one send/recv pair per chunk, so the regrouping costs no copy), this
// rank's expert-major order from a CUB stable radix sort of its picks, and one combine
// kernel that rounds as torch does: each row times its weight rounded to bf16, then the
// token's two rows added into zero in expert-major order (0 + a exact, then one bf16 add).
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

__global__ void picks_kernel(const int64_t* first, const int64_t* step, int64_t m, int* keys, int64_t* picks) {
  for (int64_t t = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; t < m; t += int64_t(gridDim.x) * blockDim.x) {
    const int a = int(first[t]), b = int((first[t] + step[t]) % kIds);
    keys[2 * t] = min(a, b), keys[2 * t + 1] = max(a, b);
    picks[2 * t] = 2 * t, picks[2 * t + 1] = 2 * t + 1;
  }
}

__global__ void inverse_kernel(const int64_t* sorted, int64_t n, int64_t* pos) {
  for (int64_t j = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; j < n; j += int64_t(gridDim.x) * blockDim.x)
    pos[sorted[j]] = j;
}

// out[t, c] = bf16(bf16(w_t0 y0) + bf16(w_t1 y1)), y_k = home row pos[2t + k]; the smaller
// expert's row comes first in the expert-major order, so it is the one added into zero.
__global__ void combine_kernel(const __nv_bfloat16* home, const int64_t* pos, const __nv_bfloat16* w, int64_t m,
                               int64_t n, __nv_bfloat16* out) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < m * n; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t t = i / n, c = i % n;
    const __nv_bfloat16 p0 = __hmul(home[pos[2 * t] * n + c], w[2 * t]);
    const __nv_bfloat16 p1 = __hmul(home[pos[2 * t + 1] * n + c], w[2 * t + 1]);
    out[i] = __hadd(p0, p1);
  }
}

struct PostAll2All : mgk::Reference {
  using Reference::Reference;
  const int64_t M = dim("M"), N = dim("N"), E = dim("E"), L = dim("L"), CH = dim("CH");
  mgk::DeviceBuffer<int> keys;  // [2M] expert of pick 2t + k (k = 0: the smaller expert)
  mgk::DeviceBuffer<int> keys_sorted;
  mgk::DeviceBuffer<int64_t> pick_ids;  // [2M] pick ids 2t + k, then sorted expert-major
  mgk::DeviceBuffer<int64_t> sorted;
  mgk::DeviceBuffer<int64_t> pos;         // [2M] position of pick 2t + k in the expert-major order
  mgk::DeviceBuffer<__nv_bfloat16> home;  // [2M, N] this rank's rows back, in its expert-major order
  mgk::DeviceBuffer<char> temp;
  size_t temp_bytes = 0;

  int setup() {
    const int64_t picks = 2 * M;
    MGK_CUDA_TRY(ctx, keys.allocate(picks));
    MGK_CUDA_TRY(ctx, keys_sorted.allocate(picks));
    MGK_CUDA_TRY(ctx, pick_ids.allocate(picks));
    MGK_CUDA_TRY(ctx, sorted.allocate(picks));
    MGK_CUDA_TRY(ctx, pos.allocate(picks));
    MGK_CUDA_TRY(ctx, home.allocate(picks * N));
    MGK_CUDA_TRY(ctx, cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, keys.get(), keys_sorted.get(),
                                                      pick_ids.get(), sorted.get(), int(picks), 0, bits_for(E)));
    MGK_CUDA_TRY(ctx, temp.allocate(int64_t(std::max<size_t>(temp_bytes, 16))));
    return 0;
  }

  int run(const mgk_tensor* in, const mgk_tensor* out, cudaStream_t st) {
    const int W = world(), R = rank();
    const int64_t picks = 2 * M;
    const size_t chunk = size_t(CH * N);
    const auto* src = static_cast<const __nv_bfloat16*>(in[0].data);
    // Chunk (l W + p) of this rank's expert outputs goes back to rank p, where it is rows
    // [R L CH + l CH, ... + CH) of p's expert-major order.
    if (ncclComm_t comm = this->comm()) {
      MGK_NCCL_TRY(ctx, ncclGroupStart());
      for (int p = 0; p < W; ++p)
        for (int64_t l = 0; l < L; ++l) {
          MGK_NCCL_TRY(ctx, ncclSend(src + (l * W + p) * chunk, chunk, ncclBfloat16, p, comm, st));
          MGK_NCCL_TRY(ctx, ncclRecv(home + (p * L + l) * chunk, chunk, ncclBfloat16, p, comm, st));
        }
      MGK_NCCL_TRY(ctx, ncclGroupEnd());
    } else {  // bench/compute: the local part alone, the peers' rows as zeros
      MGK_CUDA_TRY(ctx, cudaMemsetAsync(home, 0, size_t(picks) * N * 2, st));
      for (int64_t l = 0; l < L; ++l)
        MGK_CUDA_TRY(ctx, cudaMemcpyAsync(home + (R * L + l) * chunk, src + (l * W + R) * chunk, chunk * 2,
                                          cudaMemcpyDeviceToDevice, st));
    }
    const int blocks = int(std::min<int64_t>((M + 255) / 256, 4096));
    picks_kernel<<<blocks, 256, 0, st>>>(static_cast<const int64_t*>(in[1].data),
                                         static_cast<const int64_t*>(in[2].data), M, keys, pick_ids);
    MGK_LAUNCH_CHECK(ctx);
    size_t bytes = temp_bytes;  // stable: within an expert the tokens stay ascending
    MGK_CUDA_TRY(ctx, cub::DeviceRadixSort::SortPairs(temp.get(), bytes, keys.get(), keys_sorted.get(), pick_ids.get(),
                                                      sorted.get(), int(picks), 0, bits_for(E), st));
    inverse_kernel<<<int(std::min<int64_t>((picks + 255) / 256, 4096)), 256, 0, st>>>(sorted, picks, pos);
    MGK_LAUNCH_CHECK(ctx);
    combine_kernel<<<int(std::min<int64_t>((M * N + 255) / 256, 16384)), 256, 0, st>>>(
        home, pos, static_cast<const __nv_bfloat16*>(in[3].data), M, N, static_cast<__nv_bfloat16*>(out[0].data));
    MGK_LAUNCH_CHECK(ctx);
    return 0;
  }

  // On the host: this rank's expert-major order (counting sort by expert, tokens ascending),
  // hence where each pick's row is: position j lies in chunk l = (j mod L CH) / CH of the part
  // p = j / (L CH), i.e. row (l W + R) CH + j mod CH of rank p's expert_outputs. On the device,
  // in fp64: w_t0 y0 + w_t1 y1 and S = |w_t0 y0| + |w_t1 y1|.
  int oracle(const mgk_oracle_args* a, cudaStream_t st) {
    const int W = world(), R = rank();
    const int64_t N = this->N, picks = 2 * M;  // by value into the device lambda
    std::vector<std::vector<int64_t>> by_expert(static_cast<size_t>(E));  // pick ids 2t + k
    for (int64_t t = 0; t < M; ++t) {
      const int64_t x = int64_t(mgk::gen_value(a->gens[1], R, t)),
                    y = (x + int64_t(mgk::gen_value(a->gens[2], R, t))) % kIds;
      by_expert[size_t(x < y ? x : y)].push_back(2 * t);
      by_expert[size_t(x < y ? y : x)].push_back(2 * t + 1);
    }
    std::vector<int64_t> src(size_t(2 * picks));  // per pick: source rank, source row
    int64_t j = 0;
    for (const auto& v : by_expert)
      for (int64_t pick : v) {
        const int64_t p = j / (L * CH), l = (j % (L * CH)) / CH;
        src[size_t(2 * pick)] = p;
        src[size_t(2 * pick + 1)] = (l * W + R) * CH + j % CH;
        ++j;
      }
    if (j != picks) return mgk::set_error(ctx, "oracle: an expert id outside [0, E)");
    mgk::oracle::Scratch scratch(st);
    int64_t* d_src = scratch.get<int64_t>(2 * picks);
    if (!scratch.ok()) return mgk::set_error(ctx, "oracle: out of device memory");
    MGK_CUDA_TRY(ctx, cudaMemcpyAsync(d_src, src.data(), src.size() * 8, cudaMemcpyHostToDevice, st));
    const mgk_input_gen y = a->gens[0], w = a->gens[3];
    const auto [e, sc] = mgk::oracle_output(a, 0);
    MGK_CUDA_TRY(ctx, mgk::oracle::for_each(
                          M * N,
                          [=] __device__(int64_t i) {
                            const int64_t t = i / N, c = i % N;
                            double sum = 0, mag = 0;
                            for (int k = 0; k < 2; ++k) {
                              const int64_t pick = 2 * t + k;
                              const double v = mgk::gen_value(w, R, pick) *
                                               mgk::gen_value(y, int(d_src[2 * pick]), d_src[2 * pick + 1] * N + c);
                              sum += v;
                              mag += fabs(v);
                            }
                            e[i] = sum;
                            sc[i] = float(mag);
                          },
                          st));
    MGK_CUDA_TRY(ctx, cudaStreamSynchronize(st));  // the host vector must outlive the copy
    return 0;
  }
};

}  // namespace

MGK_REFERENCE(PostAll2All)
