// mgk-candidate: the process of one rank that runs the model's code, and nothing else. The
// launcher starts it in a sandbox (no network, a read-only filesystem but its scratch
// directory, an environment with no secrets, no capabilities) and hands it one socket, to
// its rank's trusted harness. Through it, it maps the buffers the harness made (inputs,
// outputs, snapshots, barrier flags), loads the candidate, and makes the calls it is told
// to make under the shared call protocol. It holds no oracle, no expected values, no
// checker, no reference and no NCCL (it does not even link them), and every call it is
// asked for looks the same whether it will be checked or not.
//
// It writes files beneath its scratch and /dev only, from its first instruction on
// (write_guard.h: not its own memory through /proc/self/mem either), and once its CUDA
// context exists it runs under its system-call filter (syscall_filter.h).
// Nothing it measures is trusted alone: the model's code shares this process and can rewrite
// any of it, so the harness bounds every timed call by its own clock (harness/outside_clock.h).
#include <cuda_runtime.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "call.h"
#include "driver.h"
#include "mgk/dtype_table.h"
#include "solution.h"
#include "syscall_filter.h"
#include "vmm.h"
#include "write_guard.h"
#include "wire/protocol.h"

namespace wire = mgk::wire;
namespace cand = mgk::wire::cand;
using mgk::sandbox::Mapping;
using mgk::sandbox::Solution;
using mgk::sandbox::SolutionFault;

namespace {

class CandidateProcess : public mgk::sandbox::SolutionHost {
 public:
  // `visible_device` >= 0: the launcher showed this process its GPU alone, as this ordinal,
  // whatever the harness calls it.
  CandidateProcess(int fd, int visible_device, std::string write_guard)
      : channel_(fd), visible_device_(visible_device), write_guard_(std::move(write_guard)) {}

  int serve() {
    for (;;) {
      wire::Frame f = wire::receive(channel_);
      auto* c = std::get_if<cand::Command>(&f.body);
      if (!c) throw std::runtime_error("the harness sent something other than a command");
      wire::Reply r;
      bool more = true;
      try {
        more = std::visit([&](const auto& m) { return on(m, f.fds, r.answer); }, *c);
      } catch (const SolutionFault& e) {
        r = wire::failure_reply(rank_, wire::Fault::kSolution, wire::Who::kCandidate, e.what());
      } catch (const std::exception& e) {
        r = wire::failure_reply(rank_, wire::Fault::kHarness, wire::Who::kCandidate, e.what());
      }
      wire::send(channel_, r);
      if (!more) return 0;
      // A CUDA error may have broken the context: leave; the harness reports it.
      if (!r.ok() && cudaDeviceSynchronize() != cudaSuccess) return 4;
    }
  }

  // ctx->sym_alloc: the harness makes the buffer for the whole group; this maps it.
  mgk_sym_buffer sym_alloc(size_t bytes) override {
    wire::send(channel_, wire::Request{wire::RequestKind::kSymAlloc, rank_, bytes});
    wire::Frame f = wire::receive(channel_);
    auto* resp = std::get_if<wire::Response>(&f.body);
    if (!resp || !resp->ok || int(f.fds.size()) != world_) {
      for (int fd : f.fds) ::close(fd);
      throw std::runtime_error(resp ? resp->error : "no answer to sym_alloc");
    }
    scratch_.push_back(mgk::sandbox::map_descriptors(f.fds, bytes, resp->mapped, device_, rank_));
    const Mapping& m = scratch_.back();
    return {m.local(), m.device_peers(), m.host_peers().data(), bytes};
  }
  void barrier() override {
    wire::send(channel_, wire::Request{wire::RequestKind::kBarrier, rank_, 0});
    wire::Frame f = wire::receive(channel_);
    auto* resp = std::get_if<wire::Response>(&f.body);
    if (!resp || !resp->ok) throw std::runtime_error(resp ? resp->error : "no answer to the barrier");
  }

 private:
  using Fds = std::vector<int>;

  bool on(const cand::Init& m, const Fds&, wire::Answer& a) {
    device_ = visible_device_ >= 0 ? visible_device_ : m.device;
    if (m.timed) channel_.set_spin(wire::cand::kTimedSpin);
    rank_ = m.rank;
    world_ = m.world;
    cudaDeviceProp prop;
    cudaError_t e = cudaSetDevice(device_);
    if (e == cudaSuccess) e = cudaGetDeviceProperties(&prop, device_);
    if (e != cudaSuccess)  // "out of memory" here: the GPU is too full for one more context
      throw std::runtime_error("cannot use GPU " + std::to_string(device_) + " (" + cudaGetErrorString(e) + ")");
    l2_bytes_ = size_t(prop.l2CacheSize);
    num_sms_ = prop.multiProcessorCount;
    if (cudaGetDeviceCount(&devices_) != cudaSuccess) devices_ = 1;
    a = wire::Started{prop.name, prop.multiProcessorCount, write_guard_};
    mgk::sandbox::install_syscall_filter();
    return true;
  }
  bool on(const cand::Load& m, const Fds&, wire::Answer&) {
    if (solution_) throw std::runtime_error("the candidate's library is loaded already");
    probe_site_.reset();
    if (probe_bytes_) cudaFree(probe_bytes_), probe_bytes_ = nullptr;
    solution_ = std::make_unique<Solution>(m.library, "candidate", false);
    return true;
  }
  bool on(const cand::Probe& m, const Fds&, wire::Answer& a) {
    if (solution_) throw std::runtime_error("a probe after the candidate's library was loaded");
    if (!probe_site_) {
      probe_site_ = std::make_unique<mgk::sandbox::CallSite>(rank_, world_, buffer(m.flags).device_peers(), l2_bytes_);
      if (cudaMalloc(&probe_bytes_, 32) != cudaSuccess) throw std::runtime_error("cannot allocate the probe's buffer");
    }
    char* b = static_cast<char*>(probe_bytes_);
    a = wire::CallTime{probe_site_->call(
        [&](cudaStream_t s) { mgk::sandbox::empty_launch(num_sms_, kProbeThreads, s); }, {{b, b + 16, 16}}, true,
        "probe")};
    wait_for_every_device();
    return true;
  }
  bool on(const cand::MapBuffer& m, const Fds& fds, wire::Answer&) {
    buffers_.erase(m.id);
    buffers_.emplace(m.id, mgk::sandbox::map_descriptors(fds, m.bytes, m.mapped, device_, m.symmetric ? rank_ : 0));
    return true;
  }
  bool on(const cand::Setup& m, const Fds&, wire::Answer&) {
    if (!solution_) throw std::runtime_error("setup before load");
    if (m.rank != rank_ || m.world != world_) throw std::runtime_error("setup for another rank than this process's");
    input_sets_.clear();
    for (const auto& set : m.input_sets) {
      input_sets_.emplace_back();
      for (const auto& t : set) input_sets_.back().push_back(tensor(t));
    }
    // Per input set: an output in place of an input is that input's buffer of the set.
    outputs_.assign(input_sets_.size(), {});
    outputs_io_.assign(input_sets_.size(), {});
    for (size_t set = 0; set < m.input_sets.size(); ++set)
      for (size_t o = 0; o < m.outputs.size(); ++o) {
        cand::TensorRef ref = m.outputs[o];
        if (ref.plan.in_place_of >= 0) ref.buffer = m.input_sets[set].at(size_t(ref.plan.in_place_of)).buffer;
        outputs_[set].push_back(tensor(ref));
        outputs_io_[set].push_back({outputs_[set].back().data, buffer(m.snapshots.at(o)).local(),
                                    size_t(ref.plan.numel) * mgk::dtype_size(ref.plan.dtype)});
      }
    if (outputs_.empty()) throw std::runtime_error("setup without input sets");
    site_ = std::make_unique<mgk::sandbox::CallSite>(rank_, world_, buffer(m.flags).device_peers(), l2_bytes_);
    mgk::sandbox::SetupArgs a;
    a.rank = m.rank;
    a.world = m.world;
    a.device = device_;
    a.num_sms = m.num_sms;
    for (const auto& d : m.dims) {
      a.dim_names.push_back(d.name);
      a.dim_values.push_back(d.value);
    }
    for (auto t : input_sets_.at(0)) a.inputs.push_back(descriptor(t));
    for (auto t : outputs_.at(0)) a.outputs.push_back(descriptor(t));
    a.host = this;
    solution_->setup(std::move(a));
    return true;
  }
  bool on(const cand::Call& m, const Fds&, wire::Answer& a) {
    if (!site_) throw std::runtime_error("call before setup");
    const auto& in = input_sets_.at(size_t(m.set));
    auto& out = outputs_.at(size_t(m.set));
    a = wire::CallTime{site_->call(
        [&](cudaStream_t s) { solution_->run(in.data(), int(in.size()), out.data(), int(out.size()), s); },
        outputs_io_.at(size_t(m.set)), m.aligned, "candidate")};
    wait_for_every_device();
    return true;
  }

  // Work the candidate queued on another GPU it can see is waited for too (with its GPU
  // alone visible, the launcher's way, there is none). Devices it never used are skipped:
  // waiting on them would create a context there.
  void wait_for_every_device() {
    const auto& drv = mgk::sandbox::driver();
    for (int d = 0; d < devices_; ++d) {
      if (d == device_) continue;
      CUdevice dev;
      unsigned flags = 0;
      int active = 0;
      if (drv.device_get(&dev, d) != CUDA_SUCCESS || drv.primary_ctx_state(dev, &flags, &active) != CUDA_SUCCESS ||
          !active)
        continue;
      cudaError_t e = cudaSetDevice(d);
      if (e == cudaSuccess) e = cudaDeviceSynchronize();
      cudaSetDevice(device_);
      if (e != cudaSuccess)
        throw SolutionFault(std::string("CUDA error on GPU ") + std::to_string(d) +
                            " during a call of the candidate: " + cudaGetErrorString(e));
    }
  }
  bool on(const cand::Teardown&, const Fds&, wire::Answer&) {
    cudaDeviceSynchronize();
    if (solution_) solution_->teardown();
    site_.reset();
    input_sets_.clear();
    outputs_.clear();
    outputs_io_.clear();
    scratch_.clear();
    buffers_.clear();
    names_.clear();
    return true;
  }
  bool on(const cand::Exit&, const Fds&, wire::Answer&) { return false; }

  const Mapping& buffer(int id) const {
    auto it = buffers_.find(id);
    if (it == buffers_.end()) throw std::runtime_error("unknown buffer " + std::to_string(id));
    return it->second;
  }
  mgk_tensor tensor(const cand::TensorRef& ref) {
    names_.push_back(std::make_unique<std::string>(ref.plan.name));
    mgk_tensor t{};
    t.name = names_.back()->c_str();
    t.dtype = ref.plan.dtype;
    t.ndim = int(ref.plan.shape.size());
    for (int d = 0; d < t.ndim && d < MGK_MAX_RANK_DIMS; ++d) t.shape[d] = ref.plan.shape[d];
    t.numel = ref.plan.numel;
    const Mapping& m = buffer(ref.buffer);
    t.data = m.local();
    if (ref.plan.symmetric) {
      t.peers = m.device_peers();
      t.host_peers = m.host_peers().data();
    }
    return t;
  }
  static mgk_tensor descriptor(mgk_tensor t) {
    t.data = nullptr;
    t.peers = nullptr;
    t.host_peers = nullptr;
    return t;
  }

  static constexpr int kProbeThreads = 512;  // as the harness's timing floor

  wire::Channel channel_;
  int visible_device_ = -1;
  std::string write_guard_;
  int rank_ = 0, world_ = 1, device_ = 0, devices_ = 1, num_sms_ = 0;
  size_t l2_bytes_ = 0;
  std::unique_ptr<mgk::sandbox::CallSite> probe_site_;
  void* probe_bytes_ = nullptr;
  std::unique_ptr<Solution> solution_;
  std::map<int, Mapping> buffers_;
  std::vector<Mapping> scratch_;  // the candidate's own symmetric buffers
  std::vector<std::unique_ptr<std::string>> names_;
  std::vector<std::vector<mgk_tensor>> input_sets_;
  std::vector<std::vector<mgk_tensor>> outputs_;                   // [set][output]
  std::vector<std::vector<mgk::sandbox::OutputBuffers>> outputs_io_;  // [set][output]
  std::unique_ptr<mgk::sandbox::CallSite> site_;
};

}  // namespace

int main(int argc, char** argv) {
  int fd = -1, visible_device = -1;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--fd") == 0) fd = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--visible-device") == 0) visible_device = std::atoi(argv[i + 1]);
  }
  if (fd < 0) {
    std::fprintf(stderr,
                 "usage: mgk-candidate --fd FD [--visible-device N]\n(started by 'mgk eval' for its harness; not meant "
                 "to be run by hand)\n");
    return 64;
  }
  // Before anything starts a thread: the guard binds this thread and what it starts later.
  const mgk::sandbox::WriteGuard guard = mgk::sandbox::restrict_writes(mgk::sandbox::candidate_writable_dirs());
  if (!guard.enforced) std::fprintf(stderr, "mgk-candidate: write guard %s\n", guard.description.c_str());
  try {
    return CandidateProcess(fd, visible_device, guard.description).serve();
  } catch (const mgk::wire::ClosedError&) {
    return 0;  // the harness went away
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mgk-candidate: %s\n", e.what());
    return 3;
  }
}
