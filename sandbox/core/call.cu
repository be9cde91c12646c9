#include "call.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "solution.h"

namespace mgk::sandbox {

namespace {

void ck(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

__device__ uint64_t now_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void barrier_kernel(void* const* flag_peers, int rank, int world, uint64_t epoch) {
  int t = threadIdx.x;
  if (t < world) {
    uint64_t* slot = static_cast<uint64_t*>(flag_peers[t]) + rank;
    asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(slot), "l"(epoch) : "memory");
  }
  if (t < world) {
    const uint64_t* mine = static_cast<const uint64_t*>(flag_peers[rank]) + t;
    uint64_t start = now_ns(), v = 0;
    for (;;) {
      asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(mine) : "memory");
      if (v >= epoch) break;
      if (now_ns() - start > 10ull * 1000 * 1000 * 1000) {
        printf("mgk: rank %d stalled in the alignment barrier waiting for rank %d (want epoch >= %llu, have %llu)\n",
               rank, t, (unsigned long long)epoch, (unsigned long long)v);
        __trap();
      }
    }
  }
}

__global__ void empty_kernel() {}

constexpr int kCopiesPerLaunch = 32;
struct CopyTable {
  int count;
  const unsigned char* src[kCopiesPerLaunch];
  unsigned char* dst[kCopiesPerLaunch];
  size_t bytes[kCopiesPerLaunch];
};

__global__ void copy_kernel(CopyTable t) {
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  const size_t first = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  for (int c = 0; c < t.count; ++c) {
    const size_t bytes = t.bytes[c];
    const bool aligned = ((reinterpret_cast<uintptr_t>(t.src[c]) | reinterpret_cast<uintptr_t>(t.dst[c])) & 15) == 0;
    const size_t vectors = aligned ? bytes / 16 : 0;
    const uint4* s4 = reinterpret_cast<const uint4*>(t.src[c]);
    uint4* d4 = reinterpret_cast<uint4*>(t.dst[c]);
    for (size_t i = first; i < vectors; i += stride) d4[i] = s4[i];
    for (size_t i = vectors * 16 + first; i < bytes; i += stride) t.dst[c][i] = t.src[c][i];
  }
}

}  // namespace

void copy_outputs(const std::vector<OutputBuffers>& outputs, cudaStream_t s) {
  for (size_t at = 0; at < outputs.size(); at += kCopiesPerLaunch) {
    CopyTable t{};
    size_t most = 0;
    for (size_t i = at; i < outputs.size() && t.count < kCopiesPerLaunch; ++i, ++t.count) {
      t.src[t.count] = static_cast<const unsigned char*>(outputs[i].data);
      t.dst[t.count] = static_cast<unsigned char*>(outputs[i].snapshot);
      t.bytes[t.count] = outputs[i].bytes;
      most = std::max(most, outputs[i].bytes);
    }
    const int blocks = int(std::clamp<size_t>((most / 16 + 511) / 512, 1, 1024));
    copy_kernel<<<blocks, 512, 0, s>>>(t);
    ck(cudaGetLastError(), "snapshot copy launch");
  }
}

void device_barrier(void* const* flag_peers, int rank, int world, uint64_t epoch, cudaStream_t s) {
  barrier_kernel<<<1, 128, 0, s>>>(flag_peers, rank, world, epoch);
  ck(cudaGetLastError(), "barrier launch");
}

void empty_launch(int blocks, int threads, cudaStream_t s) {
  empty_kernel<<<blocks, threads, 0, s>>>();
  ck(cudaGetLastError(), "empty kernel launch");
}

CallSite::CallSite(int rank, int world, void* const* flag_peers, size_t l2_bytes)
    : rank_(rank), world_(world), flag_peers_(flag_peers) {
  ck(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "stream");
  ck(cudaStreamCreateWithFlags(&side_, cudaStreamNonBlocking), "side stream");
  ck(cudaEventCreate(&start_), "event");
  ck(cudaEventCreate(&end_), "event");
  flush_bytes_ = std::max<size_t>(2 * l2_bytes, 8u << 20);
  ck(cudaMalloc(&flush_, flush_bytes_), "L2 flush buffer");
}

CallSite::~CallSite() {
  cudaDeviceSynchronize();
  cudaFree(flush_);
  cudaEventDestroy(start_);
  cudaEventDestroy(end_);
  cudaStreamDestroy(stream_);
  cudaStreamDestroy(side_);
}

void CallSite::barrier() { device_barrier(flag_peers_, rank_, world_, ++epoch_, stream_); }

double CallSite::call(const std::function<void(cudaStream_t)>& enqueue, const std::vector<OutputBuffers>& outputs,
                      bool aligned, const char* who) {
  if (aligned) {
    barrier();  // every rank's inputs are staged
    ck(cudaMemsetAsync(flush_, int(++flush_value_ & 0xff), flush_bytes_, stream_), "L2 flush");
    barrier();  // aligned right before the clock starts
  }
  ck(cudaEventRecord(start_, stream_), "record");
  try {
    enqueue(stream_);
  } catch (const SolutionFault&) {
    throw;
  } catch (const std::exception& e) {
    throw SolutionFault(e.what());
  }
  ck(cudaEventRecord(end_, stream_), "record");
  // Device-side, the moment the stream reaches the end event, with no host round trip: work
  // the solution left running on another stream (or a peer still writing) is caught half-way.
  ck(cudaStreamWaitEvent(side_, end_, 0), "snapshot wait");
  copy_outputs(outputs, side_);
  if (aligned) barrier();  // every rank is done before anyone's inputs are rewritten
  cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess)
    throw SolutionFault(std::string("CUDA error during a call of the ") + who + ": " + cudaGetErrorString(e));
  float ms = 0;
  ck(cudaEventElapsedTime(&ms, start_, end_), "elapsed");
  return double(ms) * 1000.0;
}

}  // namespace mgk::sandbox
