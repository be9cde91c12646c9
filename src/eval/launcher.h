// Starts one mgk-harness process per rank, brokers what needs every rank (symmetric memory
// handles, host barriers), and watches them: a command that does not finish in time is a
// hang, reported with the phase each rank was in, and the whole group is killed.
#pragma once
#include <sys/types.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "wire/channel.h"

namespace mgk::eval {

// A rank did not answer in time. `phase` names what it was doing.
struct HangError : Error {
  HangError(std::string message, std::string phase_) : Error(std::move(message), ExitCode::kTimeout), phase(std::move(phase_)) {}
  std::string phase;
};

// A rank reported a failure ("fault": "solution" or "harness"), or died.
struct RankError : Error {
  RankError(std::string message, std::string fault_, std::string who_, std::string phase_)
      : Error(std::move(message)), fault(std::move(fault_)), who(std::move(who_)), phase(std::move(phase_)) {}
  std::string fault;  // "solution": the kernel's doing; "harness": ours; "died": process ended
  std::string who;    // "candidate" or "reference" when known
  std::string phase;
};

class RankGroup {
 public:
  // `gpus[r]` is the CUDA ordinal (as this process sees them) for rank r.
  RankGroup(const std::filesystem::path& harness, const std::vector<int>& gpus,
            const std::filesystem::path& work_dir);
  ~RankGroup();  // kills every rank still alive
  RankGroup(const RankGroup&) = delete;
  RankGroup& operator=(const RankGroup&) = delete;

  int world() const { return int(ranks_.size()); }

  // Sends bodies[r] to every rank r (one body for all if bodies.size()==1) and waits for
  // every reply, serving broker requests meanwhile. Throws HangError after `timeout_s`
  // without all replies, RankError when a rank fails or dies.
  std::vector<nlohmann::json> command(const std::vector<nlohmann::json>& bodies, const std::string& phase,
                                      double timeout_s);
  nlohmann::json command_one(int rank, const nlohmann::json& body, const std::string& phase, double timeout_s);

  void kill_all();
  std::string rank_log_tail(int rank, size_t max_chars = 2000) const;

 private:
  struct Rank {
    pid_t pid = -1;
    wire::Channel channel;
    std::string last_phase;
    std::filesystem::path log;
    bool alive = true;
  };
  void handle_request(int rank, wire::Message& m);
  [[noreturn]] void rank_died(int rank, const std::string& phase);

  std::vector<Rank> ranks_;
  std::filesystem::path socket_path_;
  // Pending collective request: which ranks asked, with what.
  std::string pending_kind_;
  std::vector<bool> pending_arrived_;
  std::vector<int> pending_fds_;
  std::vector<unsigned long long> pending_bytes_;
};

}  // namespace mgk::eval
