// Mutant of tests/gpu/candidates/sort/distributed_sample_sort.cu. Class: off by one in an index (the search's comparison).
// The search finds the largest key with cum[k] < g instead of <= g: the first position of every run of equal values gets the previous run's value (position 0 the lowest key).
//
// The plain candidate's description:
// Plain: a counting sort over bf16's 65536 keys. After a barrier, every rank counts every
// rank's shifted values y = bf16(x - SH q) by key (peer pointers, atomics), prefix-sums the
// counts (one block), and gives each of its output positions g = S_r + j the key whose run
// [cum[k], cum[k + 1]) holds g (a binary search). Keys: the bf16 bits b map to b ^ 0x8000
// when b >= 0 and ~b when b < 0, so that unsigned order is numeric order.
#include "../../../candidates/plain_compute.cuh"

namespace {
constexpr int kKeys = 65536;

__device__ inline unsigned key_of(unsigned short b) { return (b & 0x8000) ? (~b & 0xFFFFu) : (b ^ 0x8000u); }
__device__ inline unsigned short bits_of(unsigned k) { return (unsigned short)((k & 0x8000) ? (k ^ 0x8000u) : (~k & 0xFFFFu)); }

// count[key(bf16(x[i] - shift))] += 1 for i < n.
__global__ void count_kernel(const __nv_bfloat16* x, int64_t n, float shift, unsigned long long* count) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const __nv_bfloat16 y = __float2bfloat16_rn(__bfloat162float(x[i]) - shift);
    atomicAdd(count + key_of(__bfloat16_as_ushort(y)), 1ull);
  }
}

// cum[k] = count[0] + ... + count[k - 1], k = 0..65536 (one block of 1024 threads, 64 keys each).
__global__ void scan_kernel(const unsigned long long* count, unsigned long long* cum) {
  __shared__ unsigned long long part[1024];
  const int t = threadIdx.x;
  unsigned long long s = 0;
  for (int k = t * 64; k < t * 64 + 64; ++k) s += count[k];
  part[t] = s;
  __syncthreads();
  if (t == 0) {
    unsigned long long run = 0;
    for (int i = 0; i < 1024; ++i) {
      const unsigned long long v = part[i];
      part[i] = run;
      run += v;
    }
  }
  __syncthreads();
  unsigned long long run = part[t];
  for (int k = t * 64; k < t * 64 + 64; ++k) {
    cum[k] = run;
    run += count[k];
  }
  if (t == 1023) cum[kKeys] = run;
}

// out[j] = the value of the key k with cum[k] <= first + j < cum[k + 1].
__global__ void place_kernel(const unsigned long long* cum, int64_t first, int64_t n, unsigned short* out) {
  for (int64_t j = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; j < n; j += int64_t(gridDim.x) * blockDim.x) {
    const unsigned long long g = first + j;
    int lo = 0, hi = kKeys - 1;  // the largest k with cum[k] <= g
    while (lo < hi) {
      const int mid = (lo + hi + 1) / 2;
      if (cum[mid] < g) lo = mid;
      else hi = mid - 1;
    }
    out[j] = bits_of(unsigned(lo));
  }
}
}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) { return plain::setup(ctx, {}, {size_t(kKeys) * 8, size_t(kKeys + 1) * 8}); }
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { plain::teardown(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  const int64_t N = mgk::dim(ctx, "N"), ND = mgk::dim(ctx, "ND"), Z = mgk::dim(ctx, "Z"), SH = mgk::dim(ctx, "SH"),
                T = mgk::dim(ctx, "T");
  const int W = ctx->world_size, r = ctx->rank;
  auto* count = static_cast<unsigned long long*>(plain::state(ctx).local[0]);
  auto* cum = static_cast<unsigned long long*>(plain::state(ctx).local[1]);
  MGK_CUDA_TRY(ctx, cudaMemsetAsync(count, 0, size_t(kKeys) * 8, s));
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));  // every rank's values of this call are in place
  for (int q = 0; q < W; ++q) {
    const int64_t n = (Z == 1 && q % 2 == 1) ? 0 : N + ND * q;  // rank q's count
    if (n == 0 || !plain::uses(ctx, q)) continue;
    count_kernel<<<plain::blocks_for(n), 256, 0, s>>>(static_cast<const __nv_bfloat16*>(in[0].host_peers[q]), n,
                                                      float(SH * q), count);
    MGK_LAUNCH_CHECK(ctx);
  }
  scan_kernel<<<1, 1024, 0, s>>>(count, cum);
  MGK_LAUNCH_CHECK(ctx);
  const int64_t first = r * (T / W) + std::min<int64_t>(r, T % W), L = out[0].numel;
  place_kernel<<<plain::blocks_for(L), 256, 0, s>>>(cum, first, L, static_cast<unsigned short*>(out[0].data));
  MGK_LAUNCH_CHECK(ctx);
  return 0;
}
