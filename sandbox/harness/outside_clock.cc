#include "outside_clock.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>

namespace mgk::harness {

namespace {
void ck(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

double quantile(std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const double pos = q * double(sorted.size() - 1);
  const size_t lo = size_t(pos), hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - double(lo));
}
}  // namespace

double monotonic_us() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

ProtocolOverhead summarize_overhead(std::vector<double> samples_us) {
  std::sort(samples_us.begin(), samples_us.end());
  ProtocolOverhead o;
  o.probes = int(samples_us.size());
  o.median_us = quantile(samples_us, 0.5);
  o.spread_us = quantile(samples_us, 0.9) - quantile(samples_us, 0.1);
  return o;
}

TrustedCopier::TrustedCopier() {
  ck(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "trusted copy stream");
  ck(cudaEventCreate(&start_), "trusted copy event");
  ck(cudaEventCreate(&end_), "trusted copy event");
}

TrustedCopier::~TrustedCopier() {
  cudaStreamSynchronize(stream_);
  cudaEventDestroy(start_);
  cudaEventDestroy(end_);
  cudaStreamDestroy(stream_);
}

double TrustedCopier::copy(const std::vector<sandbox::OutputBuffers>& io) {
  ck(cudaEventRecord(start_, stream_), "trusted copy record");
  sandbox::copy_outputs(io, stream_);
  ck(cudaEventRecord(end_, stream_), "trusted copy record");
  ck(cudaStreamSynchronize(stream_), "trusted copy");
  float ms = 0;
  ck(cudaEventElapsedTime(&ms, start_, end_), "trusted copy elapsed");
  return double(ms) * 1000.0;
}

}  // namespace mgk::harness
