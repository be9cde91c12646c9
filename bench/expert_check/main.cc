// mgk-expert-check: runs every compiled expert solution (problems/collectives/*/expert.cu,
// built as shared objects in several knob variants) on all visible GPUs, one thread per
// rank, and checks it against an independent host oracle, the way the harness would:
//   stress: 12 back-to-back calls with no host synchronisation in between; before each
//           call the input is rewritten (one of 3 sets) and the output poisoned (0xFF) on
//           the stream, after it the output is snapshotted on the stream; every snapshot
//           must match its set exactly (inputs are small integers, so sums are exact);
//   timing: 30 back-to-back calls, CUDA events per call, median per rank, max over ranks.
// Catches wrong data movement, stale flags across calls (epochs), a rank returning while a
// peer still reads its input or writes its output, and unjoined side streams.
// Exit status: 0 all correct, 1 a mismatch or a solution error, 2 usage or setup error.
#include <cuda_runtime_api.h>
#include <dirent.h>
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "collective_specs.h"
#include "in_process_group.h"

namespace mgk::bench {
namespace {

constexpr int kSets = 3;
constexpr int kStressCalls = 12;
constexpr int kTimedCalls = 30;

struct Solution {
  std::string collective, variant, path;
  mgk_setup_fn setup = nullptr;
  mgk_run_fn run = nullptr;
  mgk_teardown_fn teardown = nullptr;
};

struct CaseResult {
  std::atomic<bool> failed{false};
  std::string message;  // first failure
  std::vector<double> median_us;
  std::mutex mutex;
  void fail(const std::string& m) {
    std::lock_guard<std::mutex> lock(mutex);
    if (!failed.exchange(true)) message = m;
  }
};

// Small integers: any summation order is exact in bf16 and f32 for up to 32 ranks.
double input_value(uint64_t seed, int set, int rank, int64_t i) {
  uint64_t z = seed ^ (uint64_t(set) << 56) ^ (uint64_t(rank) << 48) ^ uint64_t(i);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return double(int(z % 17) - 8);
}

void encode(const std::vector<double>& v, mgk_dtype t, std::vector<uint8_t>* out) {
  const size_t elt = t == MGK_BF16 ? 2 : 4;
  out->resize(v.size() * elt);
  for (size_t i = 0; i < v.size(); ++i) {
    const float f = float(v[i]);
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    if (t == MGK_BF16) {
      const uint16_t h = uint16_t(bits >> 16);  // exact: small integers have no low mantissa bits
      std::memcpy(out->data() + i * 2, &h, 2);
    } else {
      std::memcpy(out->data() + i * 4, &bits, 4);
    }
  }
}

#define CHECK_CUDA(expr)                                                                        \
  do {                                                                                          \
    cudaError_t e_ = (expr);                                                                    \
    if (e_ != cudaSuccess) {                                                                    \
      result.fail(std::string("rank ") + std::to_string(rank) + ": " + #expr + ": " + cudaGetErrorString(e_)); \
      cuda_broken = true;                                                                       \
    }                                                                                           \
  } while (0)

void run_rank(const Solution& sol, const CollectiveSpec& spec, mgk_dtype dtype, int64_t d, InProcessGroup& group,
              int rank, CaseResult& result) {
  bool cuda_broken = false;
  const int world = group.world();
  const size_t elt = dtype == MGK_BF16 ? 2 : 4;
  cudaSetDevice(rank);
  std::vector<const char*> names = {spec.dim, "W"};
  std::vector<int64_t> values = {d, world};
  mgk_ctx ctx = group.make_ctx(rank, names, values);
  const int64_t x_n = spec.x_numel(d, world, rank), y_n = spec.y_numel(d, world, rank);
  const size_t x_bytes = size_t(x_n) * elt, y_bytes = size_t(y_n) * elt;

  // Tensors first (as the harness does), then the solution's setup; all collective.
  mgk_sym_buffer xb{}, yb{};
  std::string error;
  if (group.sym_alloc(rank, size_t(spec.x_alloc(d, world)) * elt, &xb, &error) ||
      group.sym_alloc(rank, size_t(spec.y_alloc(d, world)) * elt, &yb, &error))
    result.fail("rank " + std::to_string(rank) + ": symmetric allocation: " + error);
  auto tensor = [&](const char* name, const mgk_sym_buffer& b, int64_t numel) {
    mgk_tensor t{};
    t.name = name, t.dtype = dtype, t.ndim = 1, t.shape[0] = numel, t.numel = numel;
    t.data = b.local, t.peers = b.peers, t.host_peers = b.host_peers;
    return t;
  };
  const mgk_tensor x = tensor("x", xb, x_n), y = tensor("y", yb, y_n);
  if (sol.setup(&ctx) != 0) result.fail("rank " + std::to_string(rank) + ": mgk_setup: " + ctx.error);
  group.barrier();

  // Inputs of every set (every rank's, to compute the expected outputs), device copies of mine.
  const uint64_t seed = 0x5eed0000ull + uint64_t(d);
  std::vector<std::vector<uint8_t>> expected(kSets);
  std::vector<void*> pristine(kSets, nullptr);
  for (int s = 0; s < kSets; ++s) {
    std::vector<std::vector<double>> xs(world);
    for (int r = 0; r < world; ++r) {
      xs[r].resize(size_t(spec.x_numel(d, world, r)));
      for (int64_t i = 0; i < int64_t(xs[r].size()); ++i) xs[r][size_t(i)] = input_value(seed, s, r, i);
    }
    std::vector<double> want;
    spec.expect(xs, d, world, rank, &want);
    encode(want, dtype, &expected[s]);
    std::vector<uint8_t> mine;
    encode(xs[rank], dtype, &mine);
    CHECK_CUDA(cudaMalloc(&pristine[s], std::max<size_t>(x_bytes, 16)));
    CHECK_CUDA(cudaMemcpy(pristine[s], mine.data(), x_bytes, cudaMemcpyHostToDevice));
  }
  void* snapshots = nullptr;
  CHECK_CUDA(cudaMalloc(&snapshots, std::max<size_t>(y_bytes * kStressCalls, 16)));
  cudaStream_t stream = nullptr;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  // Every rank must take the same decision, or one rank's kernels wait for a rank that
  // skipped: read the shared verdict between two barriers (nobody fails in between).
  auto all_go = [&] {
    group.barrier();
    const bool go = !result.failed;
    group.barrier();
    return go && !cuda_broken;
  };

  if (all_go()) {
    for (int c = 0; c < kStressCalls; ++c) {
      CHECK_CUDA(cudaMemcpyAsync(x.data, pristine[c % kSets], x_bytes, cudaMemcpyDeviceToDevice, stream));
      CHECK_CUDA(cudaMemsetAsync(y.data, 0xFF, y_bytes, stream));
      if (sol.run(&ctx, &x, 1, &y, 1, stream) != 0) {
        result.fail("rank " + std::to_string(rank) + ": mgk_run: " + ctx.error);
        break;
      }
      CHECK_CUDA(cudaMemcpyAsync(static_cast<char*>(snapshots) + c * y_bytes, y.data, y_bytes,
                                 cudaMemcpyDeviceToDevice, stream));
    }
    CHECK_CUDA(cudaStreamSynchronize(stream));
    std::vector<uint8_t> got(y_bytes);
    for (int c = 0; c < kStressCalls && !cuda_broken && !result.failed; ++c) {
      CHECK_CUDA(cudaMemcpy(got.data(), static_cast<char*>(snapshots) + c * y_bytes, y_bytes, cudaMemcpyDeviceToHost));
      for (size_t i = 0; i < got.size(); i += elt)
        if (std::memcmp(got.data() + i, expected[c % kSets].data() + i, elt) != 0) {
          result.fail("rank " + std::to_string(rank) + ", call " + std::to_string(c) + ": y[" +
                      std::to_string(i / elt) + "] of " + std::to_string(y_n) + " is wrong");
          break;
        }
    }
  }
  if (all_go()) {
    std::vector<cudaEvent_t> ev(2 * kTimedCalls);
    for (auto& e : ev) CHECK_CUDA(cudaEventCreate(&e));
    int timed = 0;  // stop on this rank's own error only (another rank's would desynchronise)
    for (; timed < kTimedCalls; ++timed) {
      CHECK_CUDA(cudaEventRecord(ev[2 * timed], stream));
      if (sol.run(&ctx, &x, 1, &y, 1, stream) != 0) {
        result.fail("rank " + std::to_string(rank) + ": mgk_run: " + ctx.error);
        break;
      }
      CHECK_CUDA(cudaEventRecord(ev[2 * timed + 1], stream));
    }
    CHECK_CUDA(cudaStreamSynchronize(stream));
    std::vector<double> us;
    for (int c = 0; c < timed && !cuda_broken; ++c) {
      float ms = 0;
      CHECK_CUDA(cudaEventElapsedTime(&ms, ev[2 * c], ev[2 * c + 1]));
      us.push_back(ms * 1000.0);
    }
    for (auto& e : ev) cudaEventDestroy(e);
    std::sort(us.begin(), us.end());
    std::lock_guard<std::mutex> lock(result.mutex);
    result.median_us[rank] = us.empty() ? 0 : us[us.size() / 2];
  }
  group.barrier();
  if (!cuda_broken) sol.teardown(&ctx);
  for (void* p : pristine) cudaFree(p);
  cudaFree(snapshots);
  if (stream) cudaStreamDestroy(stream);
  cudaDeviceSynchronize();
  group.barrier();
}

std::vector<Solution> load_solutions(const std::string& dir, const std::string& only) {
  std::vector<Solution> out;
  DIR* d = opendir(dir.c_str());
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    std::string file = e->d_name;
    if (file.size() < 4 || file.substr(file.size() - 3) != ".so") continue;
    Solution s;
    s.path = dir + "/" + file;
    std::string stem = file.substr(0, file.size() - 3);
    const size_t dot = stem.find('.');
    s.collective = stem.substr(0, dot);
    s.variant = dot == std::string::npos ? "default" : stem.substr(dot + 1);
    if (!only.empty() && ("," + only + ",").find("," + s.collective + ",") == std::string::npos) continue;
    void* h = dlopen(s.path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      std::fprintf(stderr, "mgk-expert-check: %s\n", dlerror());
      continue;
    }
    s.setup = reinterpret_cast<mgk_setup_fn>(dlsym(h, "mgk_setup"));
    s.run = reinterpret_cast<mgk_run_fn>(dlsym(h, "mgk_run"));
    s.teardown = reinterpret_cast<mgk_teardown_fn>(dlsym(h, "mgk_teardown"));
    if (s.setup && s.run && s.teardown) out.push_back(s);
  }
  closedir(d);
  std::sort(out.begin(), out.end(), [](const Solution& a, const Solution& b) { return a.path < b.path; });
  return out;
}

}  // namespace
}  // namespace mgk::bench

int main(int argc, char** argv) {
  using namespace mgk::bench;
  std::string dir, only;
  bool large = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--experts") && i + 1 < argc) dir = argv[++i];
    else if (!std::strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
    else if (!std::strcmp(argv[i], "--large")) large = true;
    else {
      std::fprintf(stderr,
                   "usage: mgk-expert-check [--experts DIR] [--only all_reduce,gather,...] [--large]\n"
                   "  DIR holds <collective>[.<variant>].so (default: experts/ beside this program);\n"
                   "  sizes: 12345 elements (unaligned tails), then 1 MB and 16 MB (256 MB with --large) for the\n"
                   "  largest per-rank tensor\n");
      return 2;
    }
  }
  if (dir.empty()) {
    std::string self = argv[0];
    dir = (self.find('/') == std::string::npos ? std::string(".") : self.substr(0, self.rfind('/'))) + "/experts";
  }
  int world = 0;
  if (cudaGetDeviceCount(&world) != cudaSuccess || world < 2) {
    std::fprintf(stderr, "mgk-expert-check: needs at least 2 GPUs\n");
    return 2;
  }
  for (int a = 0; a < world; ++a) {
    cudaSetDevice(a);
    for (int b = 0; b < world; ++b)
      if (a != b && cudaDeviceEnablePeerAccess(b, 0) != cudaSuccess) (void)cudaGetLastError();
  }
  const std::vector<Solution> solutions = load_solutions(dir, only);
  if (solutions.empty()) {
    std::fprintf(stderr, "mgk-expert-check: no solutions (*.so) in %s\n", dir.c_str());
    return 2;
  }
  std::printf("%d GPUs; %-16s %-12s %-5s %12s %10s  %s\n", world, "collective", "variant", "dtype", "elements",
              "max-rank us", "result");
  bool all_ok = true;
  for (const Solution& sol : solutions) {
    const CollectiveSpec* spec = nullptr;
    for (const auto& s : collective_specs())
      if (sol.collective == s.name) spec = &s;
    if (!spec) continue;
    for (mgk_dtype dtype : {MGK_BF16, MGK_F32}) {
      const int64_t elt = dtype == MGK_BF16 ? 2 : 4;
      // d such that the largest per-rank tensor holds 1 MB, 16 MB (256 MB): x[N] for
      // all_reduce, y[W*N] for all_gather, x[W*C] for reduce_scatter; plus an odd size.
      const int64_t per_d = std::max(spec->x_alloc(1, world), spec->y_alloc(1, world)) * elt;
      std::vector<int64_t> dims = {12345, (int64_t(1) << 20) / per_d, (int64_t(16) << 20) / per_d};
      if (large) dims.push_back((int64_t(256) << 20) / per_d);
      for (int64_t d : dims) {
        InProcessGroup group(world);
        CaseResult result;
        result.median_us.assign(world, 0.0);
        std::vector<std::thread> ranks;
        for (int r = 0; r < world; ++r)
          ranks.emplace_back(run_rank, std::cref(sol), std::cref(*spec), dtype, d, std::ref(group), r, std::ref(result));
        for (auto& t : ranks) t.join();
        group.release_all();
        const double us = *std::max_element(result.median_us.begin(), result.median_us.end());
        std::printf("        %-16s %-12s %-5s %12lld %10.1f  %s\n", sol.collective.c_str(), sol.variant.c_str(),
                    dtype == MGK_BF16 ? "bf16" : "f32", static_cast<long long>(d), us,
                    result.failed ? ("FAIL: " + result.message).c_str() : "ok");
        std::fflush(stdout);
        all_ok = all_ok && !result.failed;
        if (result.failed && result.message.find("cuda") != std::string::npos) {
          std::fprintf(stderr, "mgk-expert-check: a CUDA error may have broken the context; stopping\n");
          return 1;
        }
      }
    }
  }
  std::printf(all_ok ? "all correct\n" : "SOME CASES FAILED\n");
  return all_ok ? 0 : 1;
}
