// The candidate's time as the trusted harness sees it from outside the candidate's process.
//
// The candidate process times each call with CUDA events under the call protocol
// (core/call.h), but the model's code shares that process: it can rewrite the events, the
// stub, its GOT, anything. So no number from there is trusted alone. Around every call of a
// timed evaluation the harness reads its own clock:
//
//   t0 = now; ask the candidate process for the call; its answer; (W > 1: a barrier of the
//   harnesses, so that no peer still writes here); copy the outputs into memory only the
//   harness maps (what the call is judged on), timed by the harness's own events; t1 = now.
//
// Work the candidate leaves running past its answer either finishes before that copy (and
// is counted in t1 - t0) or is caught unfinished by it. What t1 - t0 holds besides the
// candidate's work is measured the same way before the candidate's library is loaded, while
// its process runs only mgk's code: probe calls of an empty kernel under the same protocol
// (the "overhead"). The copy's GPU time counts twice: once for the harness's copy, once for
// the candidate process's own snapshot of the same bytes. So
//
//   outside_i = (t1 - t0) - overhead - 2 * copy_i
//
// is a lower bound, up to noise, on how long call i took, whatever the process reported.
// A candidate median below that bound's median by more than the slack below is not
// credible (src/eval/timing.h decides and says so).
#pragma once
#include <cuda_runtime.h>

#include <vector>

#include "call.h"

namespace mgk::harness {

double monotonic_us();

// What the protocol costs around a call, from the probes: their median and spread
// (p90 - p10) of (t1 - t0) - event time - 2 * copy.
struct ProtocolOverhead {
  double median_us = 0;
  double spread_us = 0;
  int probes = 0;
};
ProtocolOverhead summarize_overhead(std::vector<double> samples_us);

// Copies outputs (data -> snapshot, the snapshot being memory only this process maps) in
// one launch on a stream of its own, and says how long the copy took on the GPU.
class TrustedCopier {
 public:
  TrustedCopier();
  ~TrustedCopier();
  TrustedCopier(const TrustedCopier&) = delete;
  TrustedCopier& operator=(const TrustedCopier&) = delete;
  double copy(const std::vector<sandbox::OutputBuffers>& io);  // µs; waits for it

 private:
  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr, end_ = nullptr;
};

}  // namespace mgk::harness
