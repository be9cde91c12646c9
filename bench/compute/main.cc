// mgk-compute-bench: are the references' compute parts at library speed? For every problem
// with a compute part, its reference (compiled as `mgk eval` compiles it) runs on one GPU
// with no communicator, which skips its NCCL steps (reference.h, MGK_NCCL_STEP), and is timed
// at the pkb and large presets (rank 0's shapes at --world ranks). Beside it: cuBLASLt's own
// best for the same GEMMs (each of the heuristic's first 8 algorithms timed, the fastest
// kept), or, for problems without a GEMM, the HBM roofline of the cost model's bytes. Every
// timed call starts with a cold L2. Prints one table; exit 0, or 1 when something failed.
//
// Usage: mgk-compute-bench [--world W] [--sizes pkb,large] [--problems GLOB] [--iterations N]
//                          [--hbm-tbps TB/s]   (defaults 8, pkb,large, the compute problems, 20, 4.2)
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "eval/compile.h"
#include "eval/plan.h"
#include "fill.h"
#include "input_gen.h"
#include "mgk/lt_gemm.h"
#include "problems/catalog.h"
#include "solution.h"

namespace mgk::bench {
namespace {

using Dims = std::map<std::string, int64_t>;

// The GEMMs each reference makes, as its setup plans them; problems absent here have none.
const std::map<std::string, std::function<std::vector<lt::GemmShape>(const Dims&)>> kGemms = {
    {"tp/allgather_gemm_AT", [](const Dims& d) {
       lt::GemmShape g{d.at("N"), d.at("M"), d.at("K")};
       g.trans_a = true;
       return std::vector<lt::GemmShape>{g};
     }},
    {"tp/allgather_gemm", [](const Dims& d) { return std::vector<lt::GemmShape>{{d.at("M"), d.at("N"), d.at("K")}}; }},
    {"tp/gemm_allreduce", [](const Dims& d) { return std::vector<lt::GemmShape>{{d.at("M"), d.at("N"), d.at("K")}}; }},
    {"tp/gemm_allgather", [](const Dims& d) { return std::vector<lt::GemmShape>{{d.at("M"), d.at("NL"), d.at("K")}}; }},
    {"tp/combined_sharded_gemms",
     [](const Dims& d) {
       return std::vector<lt::GemmShape>{{d.at("ML"), d.at("F"), d.at("H")}, {d.at("ML"), d.at("H"), d.at("F")}};
     }},
    {"tp/gemm_reducescatter", [](const Dims& d) { return std::vector<lt::GemmShape>{{d.at("M"), d.at("N"), d.at("KL")}}; }},
};

// The problems with a compute part: every one outside the pure collectives.
bool has_compute(const std::string& name) { return name.rfind("collectives/", 0) != 0; }

struct Options {
  int world = 8;
  std::vector<std::string> sizes = {"pkb", "large"};
  std::string problems = "*";
  int iterations = 20;
  double hbm_bytes_per_s = 4.2e12;
};

struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void ck(cudaError_t e, const std::string& what) {
  if (e != cudaSuccess) throw Failure(what + ": " + cudaGetErrorString(e));
}

// Device memory owned for one measurement.
struct Buffers {
  std::vector<void*> blocks;
  ~Buffers() {
    for (void* p : blocks) cudaFree(p);
  }
  void* get(size_t bytes) {
    void* p = nullptr;
    ck(cudaMalloc(&p, std::max<size_t>(bytes, 16)), "cudaMalloc");
    blocks.push_back(p);
    return p;
  }
};

// ctx->sym_alloc without peers: plain memory, every "peer" pointer this rank's own.
class LoneHost : public sandbox::SolutionHost {
 public:
  explicit LoneHost(int world) : world_(world) {}
  mgk_sym_buffer sym_alloc(size_t bytes) override {
    void* p = buffers_.get(bytes);
    ck(cudaMemset(p, 0, bytes), "cudaMemset");
    host_peers_.push_back(std::make_unique<std::vector<void*>>(world_, p));
    void* device_peers = buffers_.get(sizeof(void*) * world_);
    ck(cudaMemcpy(device_peers, host_peers_.back()->data(), sizeof(void*) * world_, cudaMemcpyHostToDevice), "peers");
    return {p, static_cast<void* const*>(device_peers), host_peers_.back()->data(), bytes};
  }
  void barrier() override {}

 private:
  int world_;
  Buffers buffers_;
  std::vector<std::unique_ptr<std::vector<void*>>> host_peers_;
};

struct Timer {
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, end = nullptr;
  void* flush = nullptr;
  size_t flush_bytes = 0;
  Timer() {
    int device = 0, l2 = 0;
    ck(cudaGetDevice(&device), "cudaGetDevice");
    ck(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device), "L2 size");
    flush_bytes = std::max<size_t>(size_t(l2) * 4, size_t(64) << 20);
    ck(cudaMalloc(&flush, flush_bytes), "flush buffer");
    ck(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
    ck(cudaEventCreate(&start), "event");
    ck(cudaEventCreate(&end), "event");
  }
  ~Timer() {
    cudaFree(flush);
    cudaEventDestroy(start);
    cudaEventDestroy(end);
    cudaStreamDestroy(stream);
  }
  // The median time of `call` in microseconds, each call after an L2 flush, after 3 warm-up calls.
  double median_us(const std::function<void(cudaStream_t)>& call, int iterations) {
    for (int i = 0; i < 3; ++i) call(stream);
    std::vector<double> us;
    for (int i = 0; i < iterations; ++i) {
      ck(flush_l2(flush, flush_bytes, stream), "flush");
      ck(cudaEventRecord(start, stream), "event");
      call(stream);
      ck(cudaEventRecord(end, stream), "event");
      ck(cudaEventSynchronize(end), "timed call");
      float ms = 0;
      ck(cudaEventElapsedTime(&ms, start, end), "elapsed");
      us.push_back(ms * 1e3);
    }
    std::sort(us.begin(), us.end());
    return us[us.size() / 2];
  }
};

mgk_tensor descriptor(const wire::TensorPlan& p) {
  mgk_tensor t{};
  t.name = p.name.c_str();
  t.dtype = p.dtype;
  t.ndim = int(p.shape.size());
  for (int d = 0; d < t.ndim; ++d) t.shape[d] = p.shape[d];
  t.numel = p.numel;
  return t;
}

// The reference's compute part: its mgk_run with no communicator, rank 0's tensors.
double time_reference(const std::filesystem::path& library, const eval::EvalPlan& plan, Timer& timer, int iterations,
                      int num_sms) {
  const wire::PresetPlan& p = plan.sizes[0].ranks[0];
  Buffers buffers;
  sandbox::SetupArgs args;
  args.rank = 0;
  args.world = plan.world_size;
  args.num_sms = num_sms;
  for (const auto& d : p.dims) args.dim_names.push_back(d.name), args.dim_values.push_back(d.value);
  std::vector<mgk_tensor> in, out;
  for (size_t i = 0; i < p.inputs.size(); ++i) {
    const auto& t = p.inputs[i];
    mgk_tensor x = descriptor(t);
    args.inputs.push_back(x);
    x.data = buffers.get(size_t(t.numel) * dtype_size(t.dtype));
    const mgk_input_gen gen = sandbox::input_gen(t.init, t.dtype, 0x5eed0000u + i);
    ck(fill(gen, x.data, t.numel, timer.stream), "fill " + t.name);
    in.push_back(x);
  }
  for (const auto& t : p.outputs) {
    mgk_tensor y = descriptor(t);
    args.outputs.push_back(y);
    y.data = buffers.get(size_t(t.numel) * dtype_size(t.dtype));
    out.push_back(y);
  }
  ck(cudaStreamSynchronize(timer.stream), "fill");
  LoneHost host(plan.world_size);
  args.host = &host;
  sandbox::Solution ref(library.string(), "reference", false);
  ref.setup(args);
  const double us = timer.median_us(
      [&](cudaStream_t s) { ref.run(in.data(), int(in.size()), out.data(), int(out.size()), s); }, iterations);
  ref.teardown();
  return us;
}

// cuBLASLt's best for one GEMM: the fastest of the heuristic's first 8 algorithms.
double time_best_gemm(cublasLtHandle_t lt, const lt::GemmShape& g, Timer& timer, int iterations) {
  Buffers buffers;
  const size_t out_elt = g.d_type == CUDA_R_32F ? 4 : 2;
  void* a = buffers.get(size_t(g.m * g.k) * 2);
  void* b = buffers.get(size_t(g.k * g.n) * 2);
  void* d = buffers.get(size_t(g.m * g.n) * out_elt);
  const mgk_input_gen gen{0xbe57, MGK_DIST_NORMAL, 0, 1, MGK_BF16, 0, 0, 0, 0};  // no special rows
  ck(fill(gen, a, g.m * g.k, timer.stream), "fill A");
  ck(fill(gen, b, g.k * g.n, timer.stream), "fill B");
  double best = 0;
  for (int algo = 0; algo < 8; ++algo) {
    lt::Gemm gemm;
    if (gemm.plan(lt, g, size_t(32) << 20, algo) != CUBLAS_STATUS_SUCCESS) break;
    cublasStatus_t status = CUBLAS_STATUS_SUCCESS;
    const double us = timer.median_us([&](cudaStream_t s) { status = gemm.run(a, b, d, s); }, iterations);
    if (status != CUBLAS_STATUS_SUCCESS) continue;
    if (best == 0 || us < best) best = us;
  }
  if (best == 0) throw Failure("no cuBLASLt algorithm ran");
  return best;
}

std::string shape_text(const std::vector<lt::GemmShape>& gemms, const Dims& dims) {
  std::string s;
  for (const auto& g : gemms)
    s += (s.empty() ? "" : " + ") + std::to_string(g.m) + "x" + std::to_string(g.n) + "x" + std::to_string(g.k);
  if (!s.empty()) return s;
  for (const auto& [k, v] : dims)
    if (k != "W") s += (s.empty() ? "" : " ") + k + "=" + std::to_string(v);
  return s;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "mgk-compute-bench: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--world") o.world = std::atoi(value().c_str());
    else if (a == "--iterations") o.iterations = std::max(1, std::atoi(value().c_str()));
    else if (a == "--problems") o.problems = value();
    else if (a == "--hbm-tbps") o.hbm_bytes_per_s = std::atof(value().c_str()) * 1e12;
    else if (a == "--sizes") {
      o.sizes.clear();
      std::string v = value();
      for (size_t at = 0; at <= v.size();) {
        size_t comma = std::min(v.find(',', at), v.size());
        if (comma > at) o.sizes.push_back(v.substr(at, comma - at));
        at = comma + 1;
      }
    } else {
      std::fprintf(stderr,
                   "usage: mgk-compute-bench [--world W] [--sizes pkb,large] [--problems GLOB] [--iterations N] "
                   "[--hbm-tbps TB/s]\n");
      std::exit(2);
    }
  }
  return o;
}

int run(const Options& o) {
  std::vector<std::string> names;
  for (const auto& n : problems::match(o.problems))
    if (has_compute(n)) names.push_back(n);
  if (names.empty()) throw Failure("no compute problem matches '" + o.problems + "'");
  int device = 0, num_sms = 0;
  ck(cudaGetDevice(&device), "cudaGetDevice");
  ck(cudaDeviceGetAttribute(&num_sms, cudaDevAttrMultiProcessorCount, device), "SM count");
  cudaDeviceProp prop{};
  ck(cudaGetDeviceProperties(&prop, device), "device properties");
  // The references, compiled as mgk eval compiles them (into its cache), all at once.
  std::map<std::string, std::future<eval::CompileResult>> builds;
  for (const auto& n : names) {
    const problems::Spec spec = problems::load(n);
    builds[n] = std::async(std::launch::async, [spec] {
      return eval::compile({spec.reference_path(), spec.dir, {}, {}, "sm_90a", true, ""});
    });
  }
  std::printf("mgk-compute-bench on %s, W=%d (rank 0's shapes), median of %d calls each after an L2 flush; "
              "HBM roofline at %.1f TB/s\n\n",
              prop.name, o.world, o.iterations, o.hbm_bytes_per_s / 1e12);
  std::printf("%-27s %-7s %-34s %12s %14s %7s %10s\n", "problem", "preset", "shape (GEMM m x n x k)", "reference us",
              "cuBLASLt us", "ratio", "TFLOP/s");
  std::printf("%-27s %-7s %-34s %12s %14s %7s %10s\n", "", "", "", "", "(or HBM us)", "", "(or TB/s)");
  lt::Handle lt;
  if (lt.create() != CUBLAS_STATUS_SUCCESS) throw Failure("cublasLtCreate failed");
  Timer timer;
  int failures = 0;
  for (const auto& n : names) {
    const eval::CompileResult build = builds[n].get();
    for (const auto& size : o.sizes) {
      try {
        if (!build.ok) throw Failure("the reference does not compile: " + build.refusal + build.log.substr(0, 400));
        const eval::EvalPlan plan = eval::plan_evaluation(problems::load(n), {size}, "", o.world);
        Dims dims;
        for (const auto& d : plan.sizes[0].ranks[0].dims) dims[d.name] = d.value;
        const double ref_us = time_reference(build.library, plan, timer, o.iterations, num_sms);
        const auto gemms = kGemms.count(n) ? kGemms.at(n)(dims) : std::vector<lt::GemmShape>{};
        double lib_us = 0, flops = 0;
        for (const auto& g : gemms) {
          lib_us += time_best_gemm(lt, g, timer, o.iterations);
          flops += 2.0 * double(g.m) * double(g.n) * double(g.k);
        }
        const double hbm = plan.sizes[0].max_cost.hbm_bytes;
        const double bound_us = gemms.empty() ? hbm / o.hbm_bytes_per_s * 1e6 : lib_us;
        const double rate = gemms.empty() ? hbm / (ref_us * 1e-6) / 1e12 : flops / (ref_us * 1e-6) / 1e12;
        std::printf("%-27s %-7s %-34s %12.1f %14.1f %7.2f %10.1f\n", n.c_str(), size.c_str(),
                    shape_text(gemms, dims).substr(0, 34).c_str(), ref_us, bound_us, ref_us / bound_us, rate);
      } catch (const std::exception& e) {
        ++failures;
        std::printf("%-27s %-7s FAILED: %s\n", n.c_str(), size.c_str(), e.what());
      }
      std::fflush(stdout);
    }
  }
  std::printf("\nratio = reference / (cuBLASLt's best, or the HBM roofline): 1.00 is library speed.\n");
  return failures ? 1 : 0;
}

}  // namespace
}  // namespace mgk::bench

int main(int argc, char** argv) {
  try {
    return mgk::bench::run(mgk::bench::parse(argc, argv));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mgk-compute-bench: %s\n", e.what());
    return 2;
  }
}
