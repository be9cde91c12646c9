// Reference: a sample sort whose splitters are exact. bf16 has only 2^16 keys, so instead of
// PSRS's regular samples (which split ties only approximately and need a second, rebalancing
// all-to-all) every rank sorts its keys (CUB radix sort, 16 bits), counts for each of the
// 65536 keys how many of its values lie below it (a binary search per key: 256 KiB), and
// all-gathers those counts (NCCL). From them every rank knows the global position of each of
// its values (ties placed in rank order, which the output cannot tell apart), so one variable
// all-to-all (mgk::exchange_sizes / mgk::exchange_blocks) sends each value straight to the rank
// that outputs its position; that rank sorts the sorted runs it received (CUB) into its slice.
//
// Where the gathered values are no larger than the counts (W NMAX <= 65536 values, e.g.
// `tiny` and `pkb`: 128 values a rank), it all-gathers the values themselves instead (padded
// to NMAX with a key above every value), sorts the W NMAX keys and keeps its slice: one
// collective and no host synchronisation, as ParallelKernelBench's own comment says a single
// all_gather, sort and slice is at its size.
//
// Keys: a bf16 bit pattern b maps to the unsigned key b ^ 0x8000 when b is non-negative and
// ~b when it is negative, so that unsigned order is numeric order (no -0 or NaN occurs).
#include <cub/cub.cuh>

#include <algorithm>
#include <vector>

#include "mgk/reference_kit.h"

namespace {

constexpr int kKeys = 65536;
constexpr uint16_t kAbove = 0xFFFF;  // the key of bf16 0x7FFF (a NaN): above every value here

__device__ inline uint16_t key_of(uint16_t b) { return (b & 0x8000) ? uint16_t(~b) : uint16_t(b ^ 0x8000); }
__device__ inline uint16_t bits_of(uint16_t k) { return (k & 0x8000) ? uint16_t(k ^ 0x8000) : uint16_t(~k); }

// keys[i] = key of bf16(x[i] - shift) for i < n, kAbove for n <= i < padded. x is an integer
// below 2^24 in magnitude and so is the shift: the fp32 difference is exact, rounded once.
__global__ void keys_kernel(const __nv_bfloat16* x, int64_t n, int64_t padded, float shift, uint16_t* keys) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < padded; i += int64_t(gridDim.x) * blockDim.x) {
    if (i < n) {
      const __nv_bfloat16 y = __float2bfloat16_rn(__bfloat162float(x[i]) - shift);
      keys[i] = key_of(__bfloat16_as_ushort(y));
    } else {
      keys[i] = kAbove;
    }
  }
}

// out[j] = the bf16 of key keys[first + j].
__global__ void decode_kernel(const uint16_t* keys, int64_t first, int64_t n, uint16_t* out) {
  for (int64_t j = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; j < n; j += int64_t(gridDim.x) * blockDim.x)
    out[j] = bits_of(keys[first + j]);
}

// below[k] = how many of the n sorted keys are < k, for k = 0..65536 (below[65536] = n).
__global__ void below_kernel(const uint16_t* sorted, int64_t n, int* below) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k > kKeys) return;
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    const int64_t mid = (lo + hi) / 2;
    if (int(sorted[mid]) < k) lo = mid + 1;
    else hi = mid;
  }
  below[k] = int(lo);
}

// The global positions: G(k) = sum over ranks q of below_q[k] (values with a smaller key),
// and rank r's values of key k hold positions G(k) + P_r(k) + [0, h_r(k)), P_r(k) = the values
// of key k on ranks q < r. How many of rank r's values lie before global position s.
__device__ int64_t before(const int* below, int world, int r, int64_t s) {
  auto G = [&](int k) {
    int64_t g = 0;
    for (int q = 0; q < world; ++q) g += below[int64_t(q) * (kKeys + 1) + k];
    return g;
  };
  if (s >= G(kKeys)) return below[int64_t(r) * (kKeys + 1) + kKeys];
  int lo = 0, hi = kKeys - 1;  // the largest k with G(k) <= s (G(0) = 0 <= s)
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (G(mid) <= s) lo = mid;
    else hi = mid - 1;
  }
  const int k = lo;
  int64_t p = 0;
  for (int q = 0; q < r; ++q) p += below[int64_t(q) * (kKeys + 1) + k + 1] - below[int64_t(q) * (kKeys + 1) + k];
  const int* mine = below + int64_t(r) * (kKeys + 1);
  const int64_t h = mine[k + 1] - mine[k];
  const int64_t ahead = s - G(k) - p;  // how far s lies into rank r's block of key k
  return mine[k] + (ahead < 0 ? 0 : ahead > h ? h : ahead);
}

// sends[d] = rank r's values whose global positions fall in rank d's slice [S_d, S_(d+1)),
// S_d = d floor(T / W) + min(d, T mod W).
__global__ void sends_kernel(const int* below, int world, int r, int64_t* sends) {
  const int d = threadIdx.x;
  if (d >= world) return;
  int64_t t = 0;
  for (int q = 0; q < world; ++q) t += below[int64_t(q) * (kKeys + 1) + kKeys];
  const int64_t base = t / world, extra = t % world;
  const int64_t s0 = d * base + (d < extra ? d : extra), s1 = (d + 1) * base + (d + 1 < extra ? d + 1 : extra);
  sends[d] = before(below, world, r, s1) - before(below, world, r, s0);
}

int blocks_for(int64_t n) { return int(std::max<int64_t>(1, std::min<int64_t>((n + 255) / 256, 4096))); }

// The values of rank q of the statement: bf16(x - SH q), counted by bf16 bit pattern.
__global__ void oracle_count_kernel(mgk_input_gen g, int q, int64_t n, double shift, unsigned long long* count) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const double y = mgk::round_to(MGK_BF16, mgk::gen_value(g, q, i) - shift);
    atomicAdd(count + __bfloat16_as_ushort(__float2bfloat16_rn(float(y))), 1ull);
  }
}

struct DistributedSampleSort : mgk::Reference {
  using Reference::Reference;
  const int64_t N = dim("N"), ND = dim("ND"), Z = dim("Z"), SH = dim("SH"), T = dim("T"), NMAX = dim("NMAX");
  const int64_t n = ctx->inputs[0].numel;   // this rank's values
  const int64_t L = ctx->outputs[0].numel;  // this rank's slice
  const bool gather_all = int64_t(world()) * NMAX <= kKeys;
  mgk::DeviceBuffer<uint16_t> keys, sorted, received, merged;
  mgk::DeviceBuffer<int> below;       // W (65536 + 1): every rank's counts below each key
  mgk::DeviceBuffer<int64_t> counts;  // 2 W: the all-to-all's sizes
  mgk::DeviceBuffer<char> temp;
  size_t temp_bytes = 0;
  std::vector<int64_t> host_counts;
  mgk::ExchangeSizes sizes;

  int setup() {
    const int W = world();
    const int64_t local = gather_all ? NMAX : n;              // keys this rank sorts first
    const int64_t most = gather_all ? W * NMAX : L;           // keys sorted last
    MGK_CUDA_TRY(ctx, keys.allocate(std::max<int64_t>(local, 1)));
    MGK_CUDA_TRY(ctx, sorted.allocate(std::max<int64_t>(local, 1)));
    MGK_CUDA_TRY(ctx, received.allocate(std::max<int64_t>(most, 1)));
    MGK_CUDA_TRY(ctx, merged.allocate(std::max<int64_t>(most, 1)));
    MGK_CUDA_TRY(ctx, below.allocate(int64_t(W) * (kKeys + 1)));
    MGK_CUDA_TRY(ctx, counts.allocate(2 * W));
    size_t a = 0, b = 0;
    MGK_CUDA_TRY(ctx, cub::DeviceRadixSort::SortKeys(nullptr, a, keys.get(), sorted.get(), int(std::max<int64_t>(local, 1)), 0, 16));
    MGK_CUDA_TRY(ctx, cub::DeviceRadixSort::SortKeys(nullptr, b, received.get(), merged.get(), int(std::max<int64_t>(most, 1)), 0, 16));
    temp_bytes = std::max<size_t>(std::max(a, b), 16);
    MGK_CUDA_TRY(ctx, temp.allocate(int64_t(temp_bytes)));
    return 0;
  }

  int sort(const uint16_t* in, uint16_t* out, int64_t count, cudaStream_t st) {
    if (count == 0) return 0;
    size_t bytes = temp_bytes;
    MGK_CUDA_TRY(ctx, cub::DeviceRadixSort::SortKeys(temp.get(), bytes, in, out, int(count), 0, 16, st));
    return 0;
  }

  int run(const mgk_tensor* in, const mgk_tensor* out, cudaStream_t st) {
    const int W = world(), r = rank();
    const auto* x = static_cast<const __nv_bfloat16*>(in[0].data);
    auto* y = static_cast<uint16_t*>(out[0].data);
    const float shift = float(SH * r);
    const ncclComm_t group = comm();
    if (gather_all) {
      keys_kernel<<<blocks_for(NMAX), 256, 0, st>>>(x, n, NMAX, shift, keys);
      MGK_LAUNCH_CHECK(ctx);
      if (group) {
        MGK_NCCL_TRY(ctx, ncclAllGather(keys.get(), received.get(), size_t(NMAX) * 2, ncclUint8, group, st));
      } else {  // bench/compute: as if every rank held this rank's values
        for (int q = 0; q < W; ++q)
          MGK_CUDA_TRY(ctx, cudaMemcpyAsync(received + q * NMAX, keys, size_t(NMAX) * 2, cudaMemcpyDeviceToDevice, st));
      }
      if (int e = sort(received, merged, W * NMAX, st)) return e;
      const int64_t first = r * (T / W) + std::min<int64_t>(r, T % W);
      decode_kernel<<<blocks_for(L), 256, 0, st>>>(merged, first, L, y);
      MGK_LAUNCH_CHECK(ctx);
      return 0;
    }
    if (n > 0) {
      keys_kernel<<<blocks_for(n), 256, 0, st>>>(x, n, n, shift, keys);
      MGK_LAUNCH_CHECK(ctx);
    }
    if (int e = sort(keys, sorted, n, st)) return e;
    if (!group) {  // bench/compute: the local sort and the final one on as many keys
      const int64_t m = std::min(n, L);
      if (m > 0) MGK_CUDA_TRY(ctx, cudaMemcpyAsync(received.get(), sorted.get(), size_t(m) * 2, cudaMemcpyDeviceToDevice, st));
      if (int e = sort(received, merged, m, st)) return e;
      decode_kernel<<<blocks_for(m), 256, 0, st>>>(merged, 0, m, y);
      MGK_LAUNCH_CHECK(ctx);
      return 0;
    }
    below_kernel<<<(kKeys + 1 + 255) / 256, 256, 0, st>>>(sorted, n, below + int64_t(r) * (kKeys + 1));
    MGK_LAUNCH_CHECK(ctx);
    MGK_NCCL_TRY(ctx, ncclAllGather(below + int64_t(r) * (kKeys + 1), below.get(), kKeys + 1, ncclInt32, group, st));
    sends_kernel<<<1, 128, 0, st>>>(below, W, r, counts);  // W <= 72
    MGK_LAUNCH_CHECK(ctx);
    if (int e = mgk::exchange_sizes(ctx, group, counts, host_counts, n, L, sizes, st)) return e;
    if (sizes.recv_at[W] != L)
      return mgk::set_error(ctx, "rank %d receives %lld values for a slice of %lld", r, (long long)sizes.recv_at[W], (long long)L);
    if (int e = mgk::exchange_blocks(ctx, group, sorted, sizes.sent, sizes.send_at.data(), received, sizes.got,
                                     sizes.recv_at.data(), 2, st))
      return e;
    if (int e = sort(received, merged, L, st)) return e;
    decode_kernel<<<blocks_for(L), 256, 0, st>>>(merged, 0, L, y);
    MGK_LAUNCH_CHECK(ctx);
    return 0;
  }

  // Exact, by its own path: every rank's values regenerated (bf16(x - SH q), in double then
  // rounded once), counted per bf16 bit pattern on the device; the host orders the distinct
  // values by their double value and walks the counts to this rank's slice
  // [r floor(T / W) + min(r, T mod W), + L).
  int oracle(const mgk_oracle_args* a, cudaStream_t st) {
    const int W = world(), r = rank();
    mgk::oracle::Scratch scratch(st);
    auto* count = scratch.get<unsigned long long>(kKeys);
    if (!scratch.ok()) return mgk::set_error(ctx, "oracle: out of device memory");
    MGK_CUDA_TRY(ctx, cudaMemsetAsync(count, 0, size_t(kKeys) * 8, st));
    int64_t total = 0;
    for (int q = 0; q < W; ++q) {
      const int64_t nq = (Z == 1 && q % 2 == 1) ? 0 : N + ND * q;
      total += nq;
      if (nq == 0) continue;
      oracle_count_kernel<<<blocks_for(nq), 256, 0, st>>>(a->gens[0], q, nq, double(SH) * q, count);
      MGK_LAUNCH_CHECK(ctx);
    }
    if (total != T) return mgk::set_error(ctx, "oracle: the counts add to %lld, T = %lld", (long long)total, (long long)T);
    std::vector<unsigned long long> host(kKeys);
    MGK_CUDA_TRY(ctx, cudaMemcpyAsync(host.data(), count, size_t(kKeys) * 8, cudaMemcpyDeviceToHost, st));
    MGK_CUDA_TRY(ctx, cudaStreamSynchronize(st));
    std::vector<std::pair<double, unsigned long long>> distinct;
    for (int b = 0; b < kKeys; ++b)
      if (host[b]) {
        const double v = double(__bfloat162float(__ushort_as_bfloat16(uint16_t(b))));
        if (!(v == v)) return mgk::set_error(ctx, "oracle: a NaN value");
        distinct.push_back({v, host[b]});
      }
    std::sort(distinct.begin(), distinct.end());
    const int64_t first = r * (T / W) + std::min<int64_t>(r, T % W);
    std::vector<double> want(L);
    int64_t at = 0;  // global position of the current distinct value's first copy
    size_t v = 0;
    for (int64_t j = 0; j < L; ++j) {
      while (at + int64_t(distinct[v].second) <= first + j) at += int64_t(distinct[v++].second);
      want[j] = distinct[v].first;
    }
    const auto [expected, scale] = mgk::oracle_output(a, 0);
    MGK_CUDA_TRY(ctx, cudaMemcpyAsync(expected, want.data(), size_t(L) * 8, cudaMemcpyHostToDevice, st));
    MGK_CUDA_TRY(ctx, cudaStreamSynchronize(st));  // the host vector must outlive the copy
    return 0;
  }
};

}  // namespace

MGK_REFERENCE(DistributedSampleSort)
