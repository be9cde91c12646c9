// Reference, as ParallelKernelBench's torch code computes it: this rank's per-expert counts
// (a CUB histogram of the picked ids, where torch sums a one-hot mask), an NCCL all-gather of
// every rank's counts, then one small kernel for the splits, this rank's columns and their
// sums. torch's .tolist() host syncs are left out: the outputs stay on the device.
#include <cub/cub.cuh>

#include "mgk/reference_kit.h"

namespace {

// One block: input_splits[p] = sum of this rank's counts over p's experts; per_local (s, l)
// = rank s's count of expert R*L + l; output_splits[s] = its row sum; sum_local[l] = the
// column sum (integers, converted to fp32 once).
__global__ void finish_kernel(const int* counts, const int* gathered, int world, int rank, int L, int64_t* input_splits,
                              int64_t* output_splits, float* per_local, float* sum_local) {
  const int E = world * L;
  for (int p = threadIdx.x; p < world; p += blockDim.x) {
    int64_t in = 0, out = 0;
    for (int l = 0; l < L; ++l) {
      in += counts[p * L + l];
      const int c = gathered[int64_t(p) * E + rank * L + l];
      per_local[p * L + l] = float(c);
      out += c;
    }
    input_splits[p] = in;
    output_splits[p] = out;
  }
  for (int l = threadIdx.x; l < L; l += blockDim.x) {
    int64_t acc = 0;
    for (int s = 0; s < world; ++s) acc += gathered[int64_t(s) * E + rank * L + l];
    sum_local[l] = float(acc);
  }
}

struct TokenPreprocess : mgk::Reference {
  using Reference::Reference;
  const int64_t E = dim("E"), M = dim("M"), K = dim("K"), L = dim("L");
  mgk::DeviceBuffer<int> counts;    // [E] this rank's per-expert counts
  mgk::DeviceBuffer<int> gathered;  // [W, E] every rank's counts, rank-major
  mgk::DeviceBuffer<char> temp;
  size_t temp_bytes = 0;

  int setup() {
    const int64_t n = M * K;
    MGK_CUDA_TRY(ctx, counts.allocate(E));
    MGK_CUDA_TRY(ctx, gathered.allocate(world() * E));
    MGK_CUDA_TRY(ctx, cub::DeviceHistogram::HistogramEven(nullptr, temp_bytes, static_cast<const int64_t*>(nullptr),
                                                          counts.get(), int(E + 1), int64_t(0), int64_t(E), n));
    MGK_CUDA_TRY(ctx, temp.allocate(int64_t(std::max<size_t>(temp_bytes, 16))));
    return 0;
  }

  int run(const mgk_tensor* in, const mgk_tensor* out, cudaStream_t st) {
    const int W = world(), L = int(this->L), E = W * L;
    size_t bytes = temp_bytes;
    MGK_CUDA_TRY(ctx, cub::DeviceHistogram::HistogramEven(temp.get(), bytes, static_cast<const int64_t*>(in[0].data),
                                                          counts.get(), E + 1, int64_t(0), int64_t(E), in[0].numel,
                                                          st));
    if (ncclComm_t comm = this->comm()) {
      MGK_NCCL_TRY(ctx, ncclAllGather(counts, gathered, size_t(E), ncclInt32, comm, st));
    } else {  // bench/compute: the local part alone, as if the peers had no tokens
      MGK_CUDA_TRY(ctx, cudaMemsetAsync(gathered, 0, size_t(W * E) * 4, st));
      MGK_CUDA_TRY(ctx, cudaMemcpyAsync(gathered + int64_t(rank()) * E, counts, size_t(E) * 4,
                                        cudaMemcpyDeviceToDevice, st));
    }
    finish_kernel<<<1, 256, 0, st>>>(counts, gathered, W, rank(), L, static_cast<int64_t*>(out[0].data),
                                     static_cast<int64_t*>(out[1].data), static_cast<float*>(out[2].data),
                                     static_cast<float*>(out[3].data));
    MGK_LAUNCH_CHECK(ctx);
    return 0;
  }

  // From the regenerated ids of every rank: counts[s][e] by integer atomics (any order gives
  // the same integers), then the four outputs straight from their definitions.
  int oracle(const mgk_oracle_args* a, cudaStream_t st) {
    const int W = world(), R = rank();
    const int64_t L = this->L, E = W * L, n = a->inputs[0].numel;  // by value into the device lambdas
    mgk::oracle::Scratch scratch(st);
    auto* counts = scratch.get<unsigned long long>(W * E);
    if (!scratch.ok()) return mgk::set_error(ctx, "oracle: out of device memory");
    MGK_CUDA_TRY(ctx, cudaMemsetAsync(counts, 0, size_t(W * E) * 8, st));
    const mgk_input_gen g = a->gens[0];
    int* bad = scratch.get<int>(1);
    if (!scratch.ok()) return mgk::set_error(ctx, "oracle: out of device memory");
    MGK_CUDA_TRY(ctx, cudaMemsetAsync(bad, 0, 4, st));
    MGK_CUDA_TRY(ctx, mgk::oracle::for_each(
                          W * n,
                          [=] __device__(int64_t i) {
                            const int s = int(i / n);
                            const int64_t e = int64_t(mgk::gen_value(g, s, i % n));
                            if (e < 0 || e >= E) *bad = 1;
                            else atomicAdd(counts + s * E + e, 1ull);
                          },
                          st));
    int host_bad = 0;
    MGK_CUDA_TRY(ctx, cudaMemcpyAsync(&host_bad, bad, 4, cudaMemcpyDeviceToHost, st));
    MGK_CUDA_TRY(ctx, cudaStreamSynchronize(st));
    if (host_bad) return mgk::set_error(ctx, "oracle: an expert id outside [0, E)");
    auto* input_splits = static_cast<long long*>(a->expected[0]);
    auto* output_splits = static_cast<long long*>(a->expected[1]);
    auto* per_local = static_cast<double*>(a->expected[2]);
    auto* sum_local = static_cast<double*>(a->expected[3]);
    MGK_CUDA_TRY(ctx, mgk::oracle::for_each(
                          W,
                          [=] __device__(int64_t p) {
                            long long in = 0, out = 0;
                            for (int64_t l = 0; l < L; ++l) {
                              in += (long long)counts[R * E + p * L + l];
                              out += (long long)counts[p * E + R * L + l];
                              per_local[p * L + l] = double(counts[p * E + R * L + l]);
                            }
                            input_splits[p] = in;
                            output_splits[p] = out;
                          },
                          st));
    MGK_CUDA_TRY(ctx, mgk::oracle::for_each(
                          L,
                          [=] __device__(int64_t l) {
                            double acc = 0;
                            for (int s = 0; s < W; ++s) acc += double(counts[s * E + R * L + l]);
                            sum_local[l] = acc;
                          },
                          st));
    return 0;
  }
};

}  // namespace

MGK_REFERENCE(TokenPreprocess)
