// The protocol of one call of a solution, the same in every process for every solution, so
// that the reference (run by the trusted rank process) and the candidate (run by its own
// process) are timed alike, and so that every call a candidate gets looks the same:
//   aligned (trials and timed calls): device barrier, L2 flush, device barrier, start event,
//     mgk_run, end event, a device-side snapshot of the outputs the moment the stream reaches
//     the end event, a device barrier (every rank is done before inputs are touched again);
//   unaligned (back-to-back calls): start event, mgk_run, end event, snapshot.
// Then the host waits for the whole device, the solution's other streams included; a CUDA
// error there is the solution's.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace mgk::sandbox {

// One output's buffers: where the solution writes it and where its snapshot goes.
struct OutputBuffers {
  void* data;
  void* snapshot;
  size_t bytes;
};

class CallSite {
 public:
  // `flag_peers`: DEVICE array of the group's barrier flag buffers (W uint64 slots each).
  CallSite(int rank, int world, void* const* flag_peers, size_t l2_bytes);
  ~CallSite();
  CallSite(const CallSite&) = delete;
  CallSite& operator=(const CallSite&) = delete;

  // Runs `enqueue` (which enqueues the call on the given stream) under the protocol and
  // returns the start-to-end time in microseconds. Throws SolutionFault (solution.h) when
  // `enqueue` throws it or a CUDA error surfaces while waiting; `who` names the solution.
  double call(const std::function<void(cudaStream_t)>& enqueue, const std::vector<OutputBuffers>& outputs,
              bool aligned, const char* who);

  cudaStream_t stream() const { return stream_; }

 private:
  void barrier();
  int rank_, world_;
  void* const* flag_peers_;
  uint64_t epoch_ = 0;
  void* flush_ = nullptr;
  size_t flush_bytes_ = 0;
  uint64_t flush_value_ = 0;
  cudaStream_t stream_ = nullptr, side_ = nullptr;
  cudaEvent_t start_ = nullptr, end_ = nullptr;
};

// One-block kernel: every rank bumps its slot on every peer's flag array to `epoch`, then
// waits until all W slots of its own array reach `epoch` (bounded: traps after ~10 s,
// printing which rank it waited for).
void device_barrier(void* const* flag_peers, int rank, int world, uint64_t epoch, cudaStream_t s);

// A kernel of `blocks` x `threads` that does nothing: what the timing floor times.
void empty_launch(int blocks, int threads, cudaStream_t s);

// Copies every output's `data` to its `snapshot` in one launch, whatever their number (so
// that the cost of a snapshot is one launch plus the bytes, as the probe of the outside
// clock assumes: harness/outside_clock.h).
void copy_outputs(const std::vector<OutputBuffers>& outputs, cudaStream_t s);

}  // namespace mgk::sandbox
