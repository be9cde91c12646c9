// Starts the processes of one evaluation, two per rank: mgk-harness (trusted: NCCL, the
// reference, the oracle, the checks) and, when there is a candidate, mgk-candidate (the
// model's code, in a sandbox: no network, no secrets, a root holding only the system's
// libraries, its own files and its GPUs' device nodes (sandboxing/candidate_root.h), no
// capabilities, its rank's GPU alone; it filters its own system calls), joined to its
// harness by a socket pair. A candidate process its filter stopped is reported as its
// refusal, naming the call. Brokers what
// needs every rank (symmetric memory handles, host barriers) and watches them all: a
// command that does not finish in time is a hang, reported with the phase each rank was in;
// a process that dies is noticed at once; either way the whole group is killed.
#pragma once
#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/error.h"
#include "process/spawn.h"
#include "sandboxing/isolation.h"
#include "wire/protocol.h"

namespace mgk::eval {

// A rank did not answer in time. `phase` names what it was doing.
struct HangError : Error {
  HangError(std::string message, std::string phase_) : Error(std::move(message), ExitCode::kTimeout), phase(std::move(phase_)) {}
  std::string phase;
};

enum class RankFault {
  kSolution,  // a rank reported the solution's failure (its setup/run, a CUDA error in its work)
  kHarness,   // a rank reported mgk's own failure
  kDied,      // a process ended
};

// A rank reported a failure, or one of its processes died.
struct RankError : Error {
  RankError(std::string message, RankFault fault_, std::optional<wire::Who> who_, std::string phase_)
      : Error(std::move(message)), fault(fault_), who(who_), phase(std::move(phase_)) {}
  RankFault fault;
  std::optional<wire::Who> who;  // whose code: known for solution faults and a candidate process's death
  std::string phase;
  bool refused = false;      // its system-call filter refused a call
  std::string refused_rule;  // the rule's class, where it names one
};

// A GPU as a candidate process is shown it: alone (CUDA_VISIBLE_DEVICES=uuid) and through
// its device node only.
struct GpuIdentity {
  std::string uuid;         // "GPU-..."
  std::string device_node;  // "/dev/nvidia3"
};

struct GroupSpec {
  std::filesystem::path harness;                  // mgk-harness
  std::optional<std::filesystem::path> candidate;  // mgk-candidate; absent: no candidate processes
  std::vector<int> gpus;                          // gpus[r]: the CUDA ordinal of rank r
  std::filesystem::path work_dir;                 // logs, sockets, the candidates' scratch dirs
  // What the candidate processes must be able to read where their sandbox hides it (the
  // compiled candidate's directory, say, when it lies under the user's home).
  std::vector<std::filesystem::path> candidate_reads;
  // How to isolate the candidates; unset: the best this machine has (sandboxing::isolation_status).
  std::optional<sandboxing::IsolationStatus> isolation;
  // gpu_ids[r]: rank r's GPU, for its candidate process: it sees that GPU alone, and the
  // device nodes of its group's GPUs (the peers' memory it maps lives there). Empty, or a
  // rank's identity unknown: its candidate sees every GPU of the machine.
  std::vector<GpuIdentity> gpu_ids;
};

class RankGroup {
 public:
  explicit RankGroup(const GroupSpec& spec);
  ~RankGroup();  // asks every rank to exit, then kills what is left
  RankGroup(const RankGroup&) = delete;
  RankGroup& operator=(const RankGroup&) = delete;

  int world() const { return int(ranks_.size()); }
  // How the candidate processes are isolated (kNone: a warning was printed).
  sandboxing::IsolationKind candidate_isolation() const { return isolation_; }

  // Sends commands[r] to every rank r (one command for all if commands.size()==1) and
  // waits for every reply, serving broker requests meanwhile. Throws HangError after
  // `timeout_s` without all replies, RankError when a rank fails or a process dies.
  std::vector<wire::Reply> command(const std::vector<wire::Command>& commands, const std::string& phase,
                                   double timeout_s);
  wire::Reply command_one(int rank, const wire::Command& c, const std::string& phase, double timeout_s);

  void kill_all();
  // The end of what rank r's harness (or its candidate process) printed.
  std::string log_tail(int rank, bool candidate, size_t max_chars = 2000) const;

 private:
  struct Rank {
    process::Child harness, candidate;
    bool has_candidate = false;
    wire::Channel channel;
    std::string last_phase;
    std::filesystem::path log, candidate_log;
  };
  void start(const GroupSpec& spec);
  void handle_request(int rank, const wire::Request& r, std::vector<int>& fds);
  // Throws RankError when a process of the group has ended.
  void check_alive(const std::string& phase);
  // Waits for `fd` to be readable (true) or the deadline (false), noticing Ctrl-C and a dead rank.
  bool readable_during_start(int fd, std::chrono::steady_clock::time_point deadline);
  int ask_rank(wire::Channel& c, std::chrono::steady_clock::time_point deadline);
  [[noreturn]] void died(int rank, bool candidate, const std::string& phase);
  std::string where_each_rank_is(const std::vector<bool>& done, const std::string& phase) const;

  std::vector<Rank> ranks_;
  sandboxing::IsolationKind isolation_ = sandboxing::IsolationKind::kNone;
  std::filesystem::path socket_path_;
  // The pending collective request: which ranks asked, with what.
  std::optional<wire::RequestKind> pending_kind_;
  std::vector<bool> pending_arrived_;
  std::vector<int> pending_fds_;
  std::vector<uint64_t> pending_bytes_;
};

}  // namespace mgk::eval
