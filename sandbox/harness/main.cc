// mgk-harness: the trusted process of one rank, started by `mgk eval` (src/eval/launcher).
// It holds NCCL, the reference and its oracle, and judges every call; the candidate, when
// there is one, runs in that rank's candidate process (mgk-candidate), which the launcher
// started in a sandbox and connected to this one (--candidate-fd). Also `mgk-harness probe`
// and `mgk-harness calibrate` for `mgk doctor` / `mgk calibrate`.
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "candidate_link.h"
#include "probe_and_calibrate.h"
#include "preset.h"

using namespace mgk::harness;
using mgk::sandbox::Solution;
using mgk::sandbox::SolutionFault;
namespace wire = mgk::wire;

namespace {

std::string hex(const void* p, size_t n) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    unsigned char c = static_cast<const unsigned char*>(p)[i];
    s += d[c >> 4];
    s += d[c & 15];
  }
  return s;
}

void unhex(const std::string& s, void* out, size_t n) {
  if (s.size() != 2 * n) throw std::runtime_error("bad NCCL id length");
  auto v = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
  for (size_t i = 0; i < n; ++i) static_cast<unsigned char*>(out)[i] = (unsigned char)(v(s[2 * i]) << 4 | v(s[2 * i + 1]));
}

void nccl_check(ncclResult_t r, const char* what) {
  if (r != ncclSuccess) throw std::runtime_error(std::string(what) + ": " + ncclGetErrorString(r));
}

const char* arg(int argc, char** argv, const char* name) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return argv[i + 1];
  return nullptr;
}

// Which solution a command names, if any.
std::optional<wire::Who> who_of(const wire::Command& c) {
  if (auto* t = std::get_if<wire::Trial>(&c)) return t->who;
  if (auto* t = std::get_if<wire::BackToBack>(&c)) return t->who;
  if (auto* t = std::get_if<wire::Time>(&c)) return t->who;
  if (std::holds_alternative<wire::Prepare>(c) || std::holds_alternative<wire::Load>(c)) return wire::Who::kCandidate;
  return std::nullopt;
}

class Rank {
 public:
  Rank(BrokerClient& broker, int rank, int world, int device, int candidate_fd)
      : broker_(broker), info_{rank, world, device, 0, 0, nullptr}, candidate_fd_(candidate_fd) {}

  // Carries out one command; false once it said goodbye.
  bool handle(const wire::Command& c) {
    wire::Reply r;  // Done unless the command has more to say
    bool more = std::visit([&](const auto& m) { return on(m, r.answer); }, c);
    broker_.reply(r);
    return more;
  }

 private:
  bool on(const wire::Whoami&, wire::Answer&) { return true; }
  bool on(const wire::Exit&, wire::Answer&) {
    preset_.reset();
    if (link_) link_->exit();
    return false;
  }
  bool on(const wire::NcclId&, wire::Answer& a) {
    ncclUniqueId id;
    nccl_check(ncclGetUniqueId(&id), "ncclGetUniqueId");
    a = wire::NcclIdMade{hex(&id, sizeof(id))};
    return true;
  }
  bool on(const wire::Init& m, wire::Answer& a) {
    cudaDeviceProp prop;
    cudaError_t e = cudaSetDevice(info_.device);
    if (e == cudaSuccess) e = cudaGetDeviceProperties(&prop, info_.device);
    if (e != cudaSuccess)  // "out of memory" here: the GPU is too full for one more context
      throw std::runtime_error("cannot use GPU " + std::to_string(info_.device) + " (" + cudaGetErrorString(e) + ")");
    info_.num_sms = prop.multiProcessorCount;
    info_.l2_bytes = size_t(prop.l2CacheSize);
    if (m.nccl_id) {  // absent when ranks share a GPU: only the candidate runs
      ncclUniqueId id;
      unhex(*m.nccl_id, &id, sizeof(id));
      nccl_check(ncclCommInitRank(&info_.comm, info_.world, id, info_.rank), "ncclCommInitRank");
    }
    timed_ = m.timed;
    pool_ = std::make_unique<BufferPool>(broker_, info_.rank, info_.world, info_.device);
    wire::Started started{prop.name, prop.multiProcessorCount, ""};
    if (candidate_fd_ >= 0) {
      link_ = std::make_unique<CandidateLink>(candidate_fd_, broker_, *pool_);
      candidate_fd_ = -1;
      started.write_guard = link_->init(info_.device, info_.rank, info_.world, timed_);
    }
    a = started;
    return true;
  }
  bool on(const wire::Load& m, wire::Answer& a) {
    a = wire::Loaded{};  // the protocol's cost, when a timed candidate's is probed below
    try {
      reference_ = std::make_unique<Solution>(m.reference, "reference", true);
    } catch (const SolutionFault& e) {  // Load names the candidate: the reference's failure is mgk's
      throw std::runtime_error(std::string(e.what()) + " (the reference: a bug in mgk's suite)");
    }
    slot_ = {};
    if (m.candidate.empty()) return true;
    if (m.candidate_is_reference) {
      // Trusted code: the reference evaluated against itself runs here, with NCCL.
      local_candidate_ = std::make_unique<Solution>(m.candidate, "candidate", false);
      slot_ = {local_candidate_.get(), nullptr, true};
    } else {
      if (!link_)
        throw std::runtime_error("a candidate runs only in its own process, and this rank was started without one");
      if (timed_) {
        try {
          link_->measure_overhead(kProbeWarmup, kProbes);
        } catch (const SolutionFault& e) {  // nothing of the candidate's has run yet: mgk's or the machine's
          throw std::runtime_error(std::string("probing the call protocol before the candidate loads: ") + e.what());
        }
        a = wire::Loaded{link_->overhead().median_us, link_->overhead().spread_us};
      }
      link_->load(m.candidate);
      slot_ = {nullptr, link_.get(), false, timed_};
    }
    return true;
  }
  bool on(const wire::Prepare& m, wire::Answer&) {
    preset_.reset();
    if (!reference_) throw std::runtime_error("prepare before load");
    preset_ = std::make_unique<Preset>(m.plan, info_, *pool_, broker_, *reference_, slot_);
    return true;
  }
  bool on(const wire::Trial& m, wire::Answer& a) {
    a = wire::Judged{preset_for(m.who).trial(m.who, m.seed)};
    return true;
  }
  bool on(const wire::BackToBack& m, wire::Answer& a) {
    a = wire::Judged{preset_for(m.who).back_to_back(m.who, m.seed, m.calls)};
    return true;
  }
  bool on(const wire::Time& m, wire::Answer& a) {
    a = preset_for(m.who).time(m.who, m.block_seed, m.warmup, m.iterations, m.checked);
    return true;
  }
  bool on(const wire::TimeFloor& m, wire::Answer& a) {
    if (!preset_) throw std::runtime_error("time_floor before prepare");
    a = wire::FloorTimes{preset_->time_floor(m.warmup, m.iterations)};
    return true;
  }
  bool on(const wire::Teardown&, wire::Answer&) {
    preset_.reset();
    pool_->release_all();
    return true;
  }

  // The prepared preset, checked for a command that runs `who`.
  Preset& preset_for(wire::Who who) {
    if (!preset_) throw std::runtime_error("a run before prepare");
    if (who == wire::Who::kCandidate && !slot_.present()) throw std::runtime_error("no candidate loaded");
    if ((who == wire::Who::kReference || slot_.gets_comm) && !info_.comm)
      throw std::runtime_error("the reference needs NCCL, which this group did not initialise (ranks share a GPU)");
    return *preset_;
  }

  // Probes of the protocol's cost before the candidate loads (outside_clock.h): some 30 ms
  // on the H200 (about 0.4 ms each), once per evaluation.
  static constexpr int kProbeWarmup = 20, kProbes = 60;

  BrokerClient& broker_;
  RankInfo info_;
  int candidate_fd_;
  bool timed_ = false;
  std::unique_ptr<BufferPool> pool_;
  std::unique_ptr<CandidateLink> link_;
  std::unique_ptr<Solution> reference_, local_candidate_;
  CandidateSlot slot_;
  std::unique_ptr<Preset> preset_;
};

int serve(const std::string& socket, int rank, int world, int device, int candidate_fd) {
  BrokerClient broker(mgk::wire::connect(socket), rank);
  Rank self(broker, rank, world, device, candidate_fd);
  for (;;) {
    wire::Command c = broker.next_command();
    try {
      if (!self.handle(c)) return 0;
    } catch (const SolutionFault& e) {
      wire::Reply r = wire::failure_reply(rank, wire::Fault::kSolution, who_of(c).value_or(wire::Who::kCandidate), e.what());
      std::get<wire::Failure>(r.answer).candidate_gone = dynamic_cast<const CandidateGone*>(&e) != nullptr;
      broker.reply(r);
      // A CUDA error in a solution may have broken this context: leave, the launcher kills
      // the group and starts fresh processes for the next evaluation.
      if (cudaGetLastError() != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess) return 4;
    } catch (const std::exception& e) {
      broker.reply(wire::failure_reply(rank, wire::Fault::kHarness, std::nullopt, e.what()));
      if (cudaDeviceSynchronize() != cudaSuccess) return 4;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  // NVLink multicast (NVLS) stays off on these machines: never let NCCL turn it on.
  setenv("NCCL_NVLS_ENABLE", "0", 1);
  setenv("NVSHMEM_DISABLE_NVLS", "1", 1);
  setenv("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1", 1);
  if (argc >= 2 && std::strcmp(argv[1], "probe") == 0) return probe_main();
  if (argc >= 2 && std::strcmp(argv[1], "calibrate") == 0) return calibrate_main(argc - 1, argv + 1);
  const char* socket = arg(argc, argv, "--socket");
  const char* rank = arg(argc, argv, "--rank");
  const char* world = arg(argc, argv, "--world");
  const char* device = arg(argc, argv, "--device");
  const char* candidate_fd = arg(argc, argv, "--candidate-fd");
  if (!socket || !rank || !world || !device) {
    std::fprintf(stderr,
                 "usage: mgk-harness --socket PATH --rank R --world W --device D [--candidate-fd FD]\n"
                 "       mgk-harness probe\n"
                 "       mgk-harness calibrate [--gpus 0,1,...]\n"
                 "(started by 'mgk eval'; not meant to be run by hand)\n");
    return 64;
  }
  try {
    return serve(socket, std::atoi(rank), std::atoi(world), std::atoi(device),
                 candidate_fd ? std::atoi(candidate_fd) : -1);
  } catch (const mgk::wire::ClosedError&) {
    return 0;  // the launcher went away: nothing left to do
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mgk-harness rank %s: %s\n", rank, e.what());
    return 3;
  }
}
