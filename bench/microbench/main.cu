// mgk-microbench: for each ordered GPU pair, each transfer mechanism, each message size
// (powers of 4, or 16 with --quick) and each SM count (1, 2, 4, ... 132, capped at the
// GPU's), the median time of a transfer (CUDA events on the executing GPU's stream, after
// a warm-up). Each mechanism is verified once per size (at the most SMs): the destination
// is zeroed, one transfer runs, and every word is compared with the source pattern.
// Exit status: 0 all verified, 1 a transfer delivered wrong data, 2 usage or CUDA error.
#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "microbench.h"

namespace mgk::bench {
namespace {

constexpr size_t kBytesPerRepeat = size_t(256) << 20;  // back-to-back transfers per timing
constexpr int kMaxIterations = 64;

#define BENCH_CUDA(expr)                                                                          \
  do {                                                                                            \
    cudaError_t e_ = (expr);                                                                      \
    if (e_ != cudaSuccess) {                                                                      \
      std::fprintf(stderr, "mgk-microbench: %s:%d: %s: %s\n", __FILE__, __LINE__, #expr,         \
                   cudaGetErrorString(e_));                                                       \
      std::exit(2);                                                                               \
    }                                                                                             \
  } while (0)

std::vector<int> sm_counts(int device_sms, bool quick) {
  const std::vector<int> wanted = quick ? std::vector<int>{1, 8, 32, 132} : std::vector<int>{1, 2, 4, 8, 16, 32, 66, 132};
  std::vector<int> out;
  for (int s : wanted)
    if (s <= device_sms) out.push_back(s);
  if (out.empty() || out.back() != device_sms) out.push_back(device_sms);  // always "all SMs"
  return out;
}

GpuBuffers make_buffers(int device, size_t bytes) {
  GpuBuffers g;
  g.device = device;
  BENCH_CUDA(cudaSetDevice(device));
  BENCH_CUDA(cudaDeviceGetAttribute(&g.sms, cudaDevAttrMultiProcessorCount, device));
  BENCH_CUDA(cudaMalloc(&g.src, bytes));
  BENCH_CUDA(cudaMalloc(&g.dst, bytes));
  BENCH_CUDA(cudaMalloc(&g.mismatches, sizeof(unsigned long long)));
  BENCH_CUDA(cudaStreamCreateWithFlags(&g.stream, cudaStreamNonBlocking));
  BENCH_CUDA(cudaEventCreate(&g.start));
  BENCH_CUDA(cudaEventCreate(&g.stop));
  BENCH_CUDA(fill_pattern(g.src, bytes, g.stream));
  BENCH_CUDA(cudaMemsetAsync(g.dst, 0, bytes, g.stream));
  BENCH_CUDA(cudaStreamSynchronize(g.stream));
  return g;
}

// Median time of one transfer, in microseconds.
double time_transfer(Mechanism m, const GpuBuffers& from, const GpuBuffers& to, size_t bytes, int sms,
                     int iterations, int repeats) {
  const GpuBuffers& exec = executing(m, from, to);
  BENCH_CUDA(cudaSetDevice(exec.device));
  for (int i = 0; i < iterations; ++i) BENCH_CUDA(enqueue_transfer(m, from, to, bytes, sms));  // warm-up
  BENCH_CUDA(cudaStreamSynchronize(exec.stream));
  std::vector<double> us;
  for (int r = 0; r < repeats; ++r) {
    BENCH_CUDA(cudaEventRecord(exec.start, exec.stream));
    for (int i = 0; i < iterations; ++i) BENCH_CUDA(enqueue_transfer(m, from, to, bytes, sms));
    BENCH_CUDA(cudaEventRecord(exec.stop, exec.stream));
    BENCH_CUDA(cudaEventSynchronize(exec.stop));
    float ms = 0;
    BENCH_CUDA(cudaEventElapsedTime(&ms, exec.start, exec.stop));
    us.push_back(double(ms) * 1000.0 / iterations);
  }
  std::sort(us.begin(), us.end());
  return us[us.size() / 2];
}

// Zeroes the destination, runs one transfer, and counts wrong words. True when correct.
bool verify_transfer(Mechanism m, const GpuBuffers& from, const GpuBuffers& to, size_t bytes, int sms) {
  BENCH_CUDA(cudaSetDevice(to.device));
  BENCH_CUDA(cudaMemsetAsync(to.dst, 0, bytes, to.stream));
  BENCH_CUDA(cudaStreamSynchronize(to.stream));
  const GpuBuffers& exec = executing(m, from, to);
  BENCH_CUDA(cudaSetDevice(exec.device));
  BENCH_CUDA(enqueue_transfer(m, from, to, bytes, sms));
  BENCH_CUDA(cudaStreamSynchronize(exec.stream));
  BENCH_CUDA(cudaSetDevice(to.device));
  BENCH_CUDA(count_mismatches(to.dst, bytes, to.mismatches, to.stream));
  unsigned long long bad = 0;
  BENCH_CUDA(cudaMemcpyAsync(&bad, to.mismatches, sizeof bad, cudaMemcpyDeviceToHost, to.stream));
  BENCH_CUDA(cudaStreamSynchronize(to.stream));
  if (bad)
    std::fprintf(stderr, "mgk-microbench: %s GPU %d -> %d, %zu bytes, %d SMs: %llu of %zu words wrong\n",
                 mechanism_name(m), from.device, to.device, bytes, sms, bad, bytes / 4);
  return bad == 0;
}

std::vector<std::pair<int, int>> all_peer_pairs(int devices) {
  std::vector<std::pair<int, int>> pairs;
  for (int a = 0; a < devices; ++a)
    for (int b = 0; b < devices; ++b) {
      int ok = 0;
      if (a != b && cudaDeviceCanAccessPeer(&ok, a, b) == cudaSuccess && ok) pairs.emplace_back(a, b);
    }
  return pairs;
}

void enable_peer_access(int a, int b) {
  BENCH_CUDA(cudaSetDevice(a));
  cudaError_t e = cudaDeviceEnablePeerAccess(b, 0);
  if (e == cudaErrorPeerAccessAlreadyEnabled) (void)cudaGetLastError();
  else BENCH_CUDA(e);
}

int run(const Options& o) {
  int devices = 0;
  BENCH_CUDA(cudaGetDeviceCount(&devices));
  if (devices < 2) {
    std::fprintf(stderr, "mgk-microbench: needs at least 2 GPUs, found %d\n", devices);
    return 2;
  }
  std::vector<std::pair<int, int>> pairs = o.pairs.empty() ? all_peer_pairs(devices) : o.pairs;
  if (pairs.empty()) {
    std::fprintf(stderr, "mgk-microbench: no GPU pair has peer access (check nvidia-smi topo -m)\n");
    return 2;
  }
  std::vector<GpuBuffers> gpus(devices);
  std::vector<bool> made(devices, false);
  for (auto [a, b] : pairs) {
    for (int d : {a, b}) {
      if (d >= devices) {
        std::fprintf(stderr, "mgk-microbench: --pairs names GPU %d, but only %d are visible\n", d, devices);
        return 2;
      }
      if (!made[d]) gpus[d] = make_buffers(d, o.max_bytes), made[d] = true;
    }
    int ok = 0;
    BENCH_CUDA(cudaDeviceCanAccessPeer(&ok, a, b));
    if (!ok) {
      std::fprintf(stderr, "mgk-microbench: GPU %d cannot access GPU %d directly\n", a, b);
      return 2;
    }
    enable_peer_access(a, b);
    enable_peer_access(b, a);
  }

  std::vector<Sample> samples;
  bool all_correct = true;
  const size_t growth = o.quick ? 16 : 4;
  for (auto [a, b] : pairs) {
    std::printf("GPU %d -> GPU %d ...\n", a, b);
    std::fflush(stdout);
    for (size_t bytes = o.min_bytes; bytes <= o.max_bytes; bytes *= growth) {
      const int iterations = int(std::clamp<size_t>(kBytesPerRepeat / bytes, 1, kMaxIterations));
      const int repeats = bytes <= (size_t(64) << 20) ? (o.quick ? 3 : 5) : (o.quick ? 2 : 3);
      for (Mechanism m : kMechanisms) {
        const std::vector<int> counts =
            uses_sms(m) ? sm_counts(executing(m, gpus[a], gpus[b]).sms, o.quick) : std::vector<int>{0};
        for (int sms : counts) {
          Sample s;
          s.src = a, s.dst = b, s.mechanism = m, s.sms = sms, s.bytes = bytes, s.iterations = iterations;
          s.us = time_transfer(m, gpus[a], gpus[b], bytes, sms, iterations, repeats);
          s.gbps = double(bytes) / s.us / 1000.0;
          if (sms == counts.back()) {
            s.verified = verify_transfer(m, gpus[a], gpus[b], bytes, sms) ? 1 : 0;
            all_correct = all_correct && s.verified == 1;
          }
          samples.push_back(s);
        }
      }
    }
  }
  print_summary(samples);
  if (!o.csv.empty()) {
    std::string error;
    if (!write_csv(samples, o.csv, &error)) {
      std::fprintf(stderr, "mgk-microbench: %s\n", error.c_str());
      return 2;
    }
    std::printf("wrote %zu samples to %s\n", samples.size(), o.csv.c_str());
  }
  if (!all_correct) std::fprintf(stderr, "mgk-microbench: some transfers delivered wrong data (see above)\n");
  return all_correct ? 0 : 1;
}

}  // namespace
}  // namespace mgk::bench

int main(int argc, char** argv) {
  mgk::bench::Options options;
  std::string error;
  if (!mgk::bench::parse_options(argc, argv, &options, &error)) {
    if (!error.empty()) std::fprintf(stderr, "mgk-microbench: %s\n", error.c_str());
    std::fputs(mgk::bench::usage().c_str(), error.empty() ? stdout : stderr);
    return error.empty() ? 0 : 2;
  }
  return mgk::bench::run(options);
}
