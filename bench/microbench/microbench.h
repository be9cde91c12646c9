// mgk-microbench: bandwidth and latency of each GPU-to-GPU transfer mechanism versus
// message size and SM count, for ordered GPU pairs, in one process driving all GPUs.
// Host-side declarations shared by the files of the benchmark.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace mgk::bench {

// How the data moves from GPU `src` to GPU `dst`.
enum class Mechanism {
  kCopyEngine,  // cudaMemcpyPeerAsync issued on src's stream; no SMs
  kTmaStore,    // kernel on src: bulk copies local -> shared -> dst's memory
  kRegStore,    // kernel on src: 16-byte loads locally, 16-byte stores to dst's memory
  kRegLoad,     // kernel on dst: 16-byte loads from src's memory, stores locally
};
constexpr Mechanism kMechanisms[] = {Mechanism::kCopyEngine, Mechanism::kTmaStore, Mechanism::kRegStore,
                                     Mechanism::kRegLoad};
const char* mechanism_name(Mechanism m);
inline bool uses_sms(Mechanism m) { return m != Mechanism::kCopyEngine; }

struct Options {
  std::vector<std::pair<int, int>> pairs;  // empty: every ordered pair with peer access
  size_t min_bytes = size_t(1) << 10;
  size_t max_bytes = size_t(1) << 30;
  bool quick = false;  // sizes x16 instead of x4, fewer SM counts and repeats
  std::string csv;     // where to write every sample, empty: nowhere
};

// Parses argv; on a usage error returns false with a one-line message in *error.
bool parse_options(int argc, char** argv, Options* options, std::string* error);
std::string usage();

// One measured configuration.
struct Sample {
  int src = 0, dst = 0;
  Mechanism mechanism = Mechanism::kCopyEngine;
  int sms = 0;  // blocks launched (one per SM); 0 for the copy engine
  size_t bytes = 0;
  int iterations = 0;  // back-to-back transfers per timed repeat
  double us = 0;       // median time per transfer
  double gbps = 0;     // bytes / us / 1000
  int verified = -1;   // -1: not checked in this configuration, 1: data correct, 0: wrong
};

// Device buffers of one GPU: a source filled with a known pattern, a destination.
struct GpuBuffers {
  int device = 0;
  int sms = 0;
  char* src = nullptr;
  char* dst = nullptr;
  unsigned long long* mismatches = nullptr;  // one counter for verification
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
};

// Enqueues one transfer of `bytes` from `from.src` to `to.dst` by `m` with `sms` blocks on
// the executing GPU's stream (kRegLoad runs on `to`, the rest on `from`). The executing GPU
// must be the current device.
cudaError_t enqueue_transfer(Mechanism m, const GpuBuffers& from, const GpuBuffers& to, size_t bytes, int sms);
inline const GpuBuffers& executing(Mechanism m, const GpuBuffers& from, const GpuBuffers& to) {
  return m == Mechanism::kRegLoad ? to : from;
}

// Fills `bytes` of `buf` (current device) with the verification pattern.
cudaError_t fill_pattern(char* buf, size_t bytes, cudaStream_t stream);
// Counts 4-byte words of `buf` (current device) that differ from the pattern, into *counter.
cudaError_t count_mismatches(const char* buf, size_t bytes, unsigned long long* counter, cudaStream_t stream);

// The compact summary (best bandwidth per mechanism and size, SMs to reach 90% of it).
void print_summary(const std::vector<Sample>& samples);
// Every sample as CSV; false (and *error) when the file cannot be written.
bool write_csv(const std::vector<Sample>& samples, const std::string& path, std::string* error);

}  // namespace mgk::bench
