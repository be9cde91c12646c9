// mgk-harness: one process per rank, started by `mgk eval` (src/eval/launcher). It loads
// the reference and the candidate, and carries out the launcher's commands: init, prepare a
// size preset, run a correctness trial, run a timing block, tear down. Also
// `mgk-harness probe` and `mgk-harness calibrate` for `mgk doctor` / `mgk calibrate`.
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "machine.h"
#include "preset.h"

using namespace mgk::harness;

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

int serve(const std::string& socket, int rank, int world, int device) {
  BrokerClient broker(mgk::wire::connect(socket), rank);
  RankInfo info{rank, world, device, 0, 0, nullptr};
  std::unique_ptr<SymmetricHeap> heap;
  std::unique_ptr<Solution> reference, candidate;
  std::unique_ptr<Preset> preset;
  bool candidate_gets_comm = false;
  // The solution a trial, timing or back-to-back command names, once a preset is prepared.
  auto solution_for = [&](const std::string& who) -> Solution* {
    if (!preset) throw std::runtime_error("a run before prepare");
    Solution* s = who == "candidate" ? candidate.get() : reference.get();
    if (!s) throw std::runtime_error("no " + who + " loaded");
    if ((s == reference.get() || candidate_gets_comm) && !info.comm)
      throw std::runtime_error("the reference needs NCCL, which this group did not initialise (ranks share a GPU)");
    return s;
  };
  for (;;) {
    mgk::wire::Message m = broker.next_command();
    std::string cmd = m.body.value("cmd", "");
    std::string who = m.body.value("who", "");
    try {
      if (cmd == "whoami") {
        broker.reply({{"ok", true}});
      } else if (cmd == "exit") {
        preset.reset();
        broker.reply({{"ok", true}});
        return 0;
      } else if (cmd == "nccl_id") {
        ncclUniqueId id;
        nccl_check(ncclGetUniqueId(&id), "ncclGetUniqueId");
        broker.reply({{"ok", true}, {"id", hex(&id, sizeof(id))}});
      } else if (cmd == "init") {
        cudaDeviceProp prop;
        if (cudaSetDevice(device) != cudaSuccess || cudaGetDeviceProperties(&prop, device) != cudaSuccess)
          throw std::runtime_error("cannot use GPU " + std::to_string(device));
        info.num_sms = prop.multiProcessorCount;
        info.l2_bytes = size_t(prop.l2CacheSize);
        if (m.body.contains("nccl_id")) {  // absent when ranks share a GPU: only the candidate runs
          ncclUniqueId id;
          unhex(m.body.at("nccl_id").get<std::string>(), &id, sizeof(id));
          nccl_check(ncclCommInitRank(&info.comm, world, id, rank), "ncclCommInitRank");
        }
        heap = std::make_unique<SymmetricHeap>(broker, rank, world, device);
        broker.reply({{"ok", true}, {"gpu", prop.name}, {"sms", prop.multiProcessorCount}});
      } else if (cmd == "load") {
        reference = std::make_unique<Solution>(m.body.at("reference").get<std::string>(), "reference", true);
        // Only the reference evaluated against itself may use NCCL as the candidate.
        candidate_gets_comm = m.body.value("candidate_is_reference", false);
        if (m.body.contains("candidate") && !m.body["candidate"].is_null()) {
          try {
            candidate = std::make_unique<Solution>(m.body["candidate"].get<std::string>(), "candidate", false);
          } catch (const std::exception& e) {
            throw SolutionFault(e.what());
          }
        }
        broker.reply({{"ok", true}});
      } else if (cmd == "prepare") {
        preset.reset();
        preset = std::make_unique<Preset>(m.body.at("plan"), info, *heap, broker, *reference, candidate.get(),
                                          candidate_gets_comm);
        broker.reply({{"ok", true}});
      } else if (cmd == "back_to_back") {
        Solution* s = solution_for(who);
        nlohmann::json r = preset->back_to_back(*s, m.body.at("seed").get<uint64_t>(), m.body.at("calls").get<int>());
        r["ok"] = true;
        broker.reply(r);
      } else if (cmd == "time_floor") {
        if (!preset) throw std::runtime_error(cmd + " before prepare");
        nlohmann::json r = preset->time_floor(m.body.at("warmup").get<int>(), m.body.at("iterations").get<int>());
        r["ok"] = true;
        broker.reply(r);
      } else if (cmd == "trial" || cmd == "time") {
        Solution* s = solution_for(who);
        nlohmann::json r;
        if (cmd == "trial")
          r = preset->trial(*s, m.body.at("seed").get<uint64_t>());
        else
          r = preset->time(*s, m.body.at("seed").get<uint64_t>(), m.body.at("warmup").get<int>(),
                           m.body.at("iterations").get<int>());
        r["ok"] = true;
        broker.reply(r);
      } else if (cmd == "teardown") {
        preset.reset();
        heap->release_all();
        broker.reply({{"ok", true}});
      } else {
        throw std::runtime_error("unknown command '" + cmd + "'");
      }
    } catch (const SolutionFault& e) {
      broker.reply({{"ok", false}, {"fault", "solution"}, {"who", who.empty() ? "candidate" : who}, {"error", e.what()}});
      // A CUDA error in the solution may have broken this context: leave, the launcher
      // kills the group and starts fresh processes for the next evaluation.
      if (cudaGetLastError() != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess) return 4;
    } catch (const std::exception& e) {
      broker.reply({{"ok", false}, {"fault", "harness"}, {"error", e.what()}});
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
  if (!socket || !rank || !world || !device) {
    std::fprintf(stderr,
                 "usage: mgk-harness --socket PATH --rank R --world W --device D\n"
                 "       mgk-harness probe\n"
                 "       mgk-harness calibrate [--gpus 0,1,...]\n"
                 "(started by 'mgk eval'; not meant to be run by hand)\n");
    return 64;
  }
  try {
    return serve(socket, std::atoi(rank), std::atoi(world), std::atoi(device));
  } catch (const mgk::wire::ClosedError&) {
    return 0;  // the launcher went away: nothing left to do
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mgk-harness rank %s: %s\n", rank, e.what());
    return 3;
  }
}
