// The transfers mgk-microbench times, written on the mgk primitives (so the benchmark also
// exercises the library's copy loops and TMA relay), plus the pattern used to verify them.
#include "mgk_primitives.cuh"
#include "microbench.h"

namespace mgk::bench {
namespace {

namespace prim = mgk::prim;

constexpr int kRegThreads = 512;
constexpr int kRegUnroll = 4;
constexpr int kTmaThreads = 128;  // thread 0 drives the relay; the rest only copy tails

// Block b copies its 16-byte aligned part of [0, bytes) with register-level ld/st; the
// remote side is whichever pointer is a peer's (dst for a push, src for a pull).
__global__ void __launch_bounds__(kRegThreads) register_copy(char* dst, const char* src, int64_t bytes) {
  const prim::span part = prim::split_aligned(bytes, gridDim.x, blockIdx.x, 16);
  prim::block_copy<kRegUnroll>(dst + part.begin, src + part.begin, part.size());
}

// Block b relays its part through shared memory with TMA bulk copies and waits until its
// stores have landed (the kernel ends only when the data is in the peer's memory).
__global__ void __launch_bounds__(kTmaThreads) tma_copy(char* dst, const char* src, int64_t bytes) {
  __shared__ prim::tma_relay<>::smem_t smem;
  prim::tma_relay<> relay;
  relay.init(&smem, "microbench TMA relay", -1);
  const prim::span part = prim::split_aligned(bytes, gridDim.x, blockIdx.x, 16);
  prim::block_copy_tma(relay, dst + part.begin, src + part.begin, part.size());
  if (threadIdx.x == 0) relay.drain();
}

__host__ __device__ uint32_t pattern(uint64_t word) { return uint32_t(word) * 2654435761u ^ 0x9e3779b9u; }

__global__ void fill_pattern_kernel(uint32_t* buf, int64_t words) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < words; i += int64_t(gridDim.x) * blockDim.x)
    buf[i] = pattern(uint64_t(i));
}

__global__ void count_mismatches_kernel(const uint32_t* buf, int64_t words, unsigned long long* counter) {
  unsigned long long bad = 0;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < words; i += int64_t(gridDim.x) * blockDim.x)
    bad += buf[i] != pattern(uint64_t(i));
  if (bad) atomicAdd(counter, bad);
}

int grid_for(int64_t words) {
  const int64_t blocks = (words + 255) / 256;
  return int(blocks < 1024 ? (blocks < 1 ? 1 : blocks) : 1024);
}

}  // namespace

const char* mechanism_name(Mechanism m) {
  switch (m) {
    case Mechanism::kCopyEngine: return "copy_engine";
    case Mechanism::kTmaStore: return "tma_store";
    case Mechanism::kRegStore: return "reg_store";
    case Mechanism::kRegLoad: return "reg_load";
  }
  return "?";
}

cudaError_t enqueue_transfer(Mechanism m, const GpuBuffers& from, const GpuBuffers& to, size_t bytes, int sms) {
  const GpuBuffers& exec = executing(m, from, to);
  switch (m) {
    case Mechanism::kCopyEngine:
      return cudaMemcpyPeerAsync(to.dst, to.device, from.src, from.device, bytes, exec.stream);
    case Mechanism::kTmaStore:
      tma_copy<<<sms, kTmaThreads, 0, exec.stream>>>(to.dst, from.src, int64_t(bytes));
      return cudaGetLastError();
    case Mechanism::kRegStore:
    case Mechanism::kRegLoad:
      register_copy<<<sms, kRegThreads, 0, exec.stream>>>(to.dst, from.src, int64_t(bytes));
      return cudaGetLastError();
  }
  return cudaErrorInvalidValue;
}

cudaError_t fill_pattern(char* buf, size_t bytes, cudaStream_t stream) {
  const int64_t words = int64_t(bytes / 4);
  fill_pattern_kernel<<<grid_for(words), 256, 0, stream>>>(reinterpret_cast<uint32_t*>(buf), words);
  return cudaGetLastError();
}

cudaError_t count_mismatches(const char* buf, size_t bytes, unsigned long long* counter, cudaStream_t stream) {
  cudaError_t e = cudaMemsetAsync(counter, 0, sizeof *counter, stream);
  if (e != cudaSuccess) return e;
  const int64_t words = int64_t(bytes / 4);
  count_mismatches_kernel<<<grid_for(words), 256, 0, stream>>>(reinterpret_cast<const uint32_t*>(buf), words, counter);
  return cudaGetLastError();
}

}  // namespace mgk::bench
