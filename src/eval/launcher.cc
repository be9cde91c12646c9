#include "eval/launcher.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/interrupt.h"
#include "common/log.h"
#include "process/run.h"
#include "sandboxing/candidate_root.h"
#include "sandboxing/environment.h"
#include "sandboxing/runner.h"
#include "wire/candidate_exit.h"

namespace mgk::eval {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

int open_log(const fs::path& p) {
  int fd = ::open(p.c_str(), O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw Error("cannot create " + p.string() + ": " + std::strerror(errno));
  return fd;
}

// Closes a descriptor when it goes out of scope.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// A sandboxed candidate is seen through its sandbox's first process (bwrap's, or the one
// that holds the PID namespace), which passes a signal on as exit 128 + signal.
std::string describe_end(int status, bool sandboxed) {
  if (sandboxed && WIFEXITED(status) && WEXITSTATUS(status) > 128 && WEXITSTATUS(status) < 160) {
    const int sig = WEXITSTATUS(status) - 128;
    return "killed by signal " + std::to_string(sig) + " (" + ::strsignal(sig) + ")";
  }
  return process::describe_status(status);
}

std::string rank_name(int r, bool candidate) {
  return (candidate ? "the candidate process of rank " : "rank ") + std::to_string(r);
}

}  // namespace

RankGroup::RankGroup(const GroupSpec& spec) {
  if (!fs::exists(spec.harness))
    throw Error("the harness binary is missing: " + spec.harness.string() + " (rebuild mgk, or set MGK_HARNESS)");
  if (spec.candidate && !fs::exists(*spec.candidate))
    throw Error("the candidate runner binary is missing: " + spec.candidate->string() +
                " (rebuild mgk, or set MGK_CANDIDATE)");
  fs::create_directories(spec.work_dir);
  socket_path_ = spec.work_dir / "broker.sock";
  wire::Listener listener(socket_path_.string());
  const int world = int(spec.gpus.size());
  ranks_.resize(world);
  pending_arrived_.assign(world, false);
  pending_fds_.assign(world, -1);
  pending_bytes_.assign(world, 0);
  start(spec);

  // Ranks connect in any order: accept them all (noticing at once one that died before it
  // connected), then ask each which rank it is.
  std::vector<wire::Channel> pending;
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  while (int(pending.size()) < world) {
    if (!readable_during_start(listener.fd(), deadline)) {
      kill_all();
      throw Error("the rank processes did not connect within 60 s");
    }
    pending.push_back(listener.accept(std::chrono::milliseconds(100)));
  }
  for (auto& c : pending) {
    const int r = ask_rank(c, deadline);
    if (r < 0 || r >= world || ranks_[r].channel.valid()) {
      kill_all();
      throw Error("a rank process sent a bad hello");
    }
    ranks_[r].channel = std::move(c);
  }
}

bool RankGroup::readable_during_start(int fd, Clock::time_point deadline) {
  for (;;) {
    check_alive("start");
    if (interrupted()) {
      kill_all();
      throw Interrupted();
    }
    if (Clock::now() > deadline) return false;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) > 0) return true;
  }
}

// Which rank a connection is. One that connected and then died or went silent must neither
// hold mgk past the start's deadline nor escape as a bare protocol error.
int RankGroup::ask_rank(wire::Channel& c, Clock::time_point deadline) {
  try {
    wire::send(c, wire::Command{wire::Whoami{}});
    if (!readable_during_start(c.fd(), deadline)) {
      kill_all();
      throw HangError("hang: a rank process connected but did not say which rank it is within 60 s", "start");
    }
    wire::Frame f = wire::receive(c);
    const auto* reply = std::get_if<wire::Reply>(&f.body);
    return reply ? reply->rank : -1;
  } catch (const wire::ClosedError&) {
    // It is leaving: name it with its exit and last words once its end is seen.
    for (int i = 0; i < 50; ++i) {
      check_alive("start");
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    kill_all();
    throw Error("a rank process closed its connection before saying which rank it is");
  }
}

void RankGroup::start(const GroupSpec& spec) {
  const int world = int(ranks_.size());
  const process::EnvMap parent = process::current_environment();
  const sandboxing::IsolationStatus how = spec.isolation ? *spec.isolation : sandboxing::isolation_status();
  if (spec.candidate) {
    isolation_ = how.kind;
    if (isolation_ == sandboxing::IsolationKind::kNone) sandboxing::warn_unisolated_once(how.problem);
  }
  // The device nodes of the group's GPUs, when each rank's is known.
  bool known_gpus = int(spec.gpu_ids.size()) == world;
  std::vector<fs::path> group_nodes;
  for (const auto& id : spec.gpu_ids) {
    if (id.device_node.empty()) known_gpus = false;
    else group_nodes.emplace_back(id.device_node);
  }
  for (int r = 0; r < world; ++r) {
    Rank& rk = ranks_[r];
    rk.log = spec.work_dir / ("rank" + std::to_string(r) + ".log");
    Fd pair[2];
    if (spec.candidate) {
      int fds[2];
      if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
        throw Error(std::string("socketpair: ") + std::strerror(errno));
      pair[0].fd = fds[0];
      pair[1].fd = fds[1];
    }
    // The trusted harness: CUDA and NCCL settings, nothing else of mgk's environment.
    {
      Fd log{open_log(rk.log)};
      process::SpawnSpec s;
      s.argv = {spec.harness.string(), "--socket", socket_path_.string(), "--rank", std::to_string(r), "--world",
                std::to_string(world), "--device", std::to_string(spec.gpus[r])};
      if (spec.candidate) {
        s.argv.insert(s.argv.end(), {"--candidate-fd", std::to_string(pair[0].fd)});
        s.inherit_fds = {pair[0].fd};
      }
      s.env = sandboxing::scrubbed_environment(parent, {}, spec.work_dir, sandboxing::EnvPolicy::kTrustedRank);
      s.working_dir = spec.work_dir;
      s.limits = process::Limits{0, 0, 0, 0};
      s.output_fd = log.fd;
      rk.harness = process::spawn(s);
    }
    if (!spec.candidate) continue;
    // The candidate: a sandbox of its own, in a scratch directory, with CUDA's settings only.
    rk.has_candidate = true;
    rk.candidate_log = spec.work_dir / ("rank" + std::to_string(r) + ".candidate.log");
    const fs::path scratch = spec.work_dir / ("candidate" + std::to_string(r));
    fs::create_directories(scratch);
    Fd log{open_log(rk.candidate_log)};
    process::SpawnSpec s;
    s.env = sandboxing::scrubbed_environment(parent, {}, scratch, sandboxing::EnvPolicy::kCandidate);
    // The runner by its real path: a symlink to it (an install, a test's fake) may point into
    // a folder the sandbox hides, /tmp above all, and exec would then find nothing.
    const fs::path runner_binary = fs::canonical(*spec.candidate);
    std::vector<fs::path> reads = spec.candidate_reads;
    reads.push_back(runner_binary);
    std::vector<std::string> argv = {runner_binary.string(), "--fd", std::to_string(pair[1].fd)};
    const bool own_gpu = known_gpus && !spec.gpu_ids[r].uuid.empty();
    if (own_gpu) {
      s.env["CUDA_VISIBLE_DEVICES"] = spec.gpu_ids[r].uuid;
      argv.insert(argv.end(), {"--visible-device", "0"});
    }
    const sandboxing::SandboxLayout layout =
        sandboxing::candidate_layout(scratch, s.env, reads, known_gpus ? group_nodes : std::vector<fs::path>{});
    sandboxing::Sandbox sandbox(how, layout);
    s.argv = sandbox.command(argv);
    s.hook = sandbox.hook();
    s.working_dir = scratch;
    s.limits.file_size_bytes = uint64_t(1) << 30;
    s.output_fd = log.fd;
    s.inherit_fds = {pair[1].fd};
    rk.candidate = process::spawn(s);
  }
}

RankGroup::~RankGroup() {
  for (auto& rk : ranks_) {
    if (rk.channel.valid() && !rk.harness.ended()) {
      try {
        wire::send(rk.channel, wire::Command{wire::Exit{}});
      } catch (const std::exception&) {
      }
    }
  }
  // Give clean exits a moment, then make sure.
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  for (auto& rk : ranks_)
    for (process::Child* c : {&rk.harness, &rk.candidate}) {
      while (c->pid() > 0 && !c->ended() && Clock::now() < deadline) usleep(5000);
      c->kill_group();
      c->wait();
    }
}

void RankGroup::kill_all() {
  for (auto& rk : ranks_) {
    rk.harness.kill_group();
    rk.candidate.kill_group();
  }
  for (auto& rk : ranks_) {
    rk.harness.wait();
    rk.candidate.wait();
  }
}

std::string RankGroup::log_tail(int rank, bool candidate, size_t max_chars) const {
  std::ifstream in(candidate ? ranks_[rank].candidate_log : ranks_[rank].log);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  if (s.size() > max_chars) s = "..." + s.substr(s.size() - max_chars);
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

void RankGroup::died(int rank, bool candidate, const std::string& phase) {
  Rank& rk = ranks_[rank];
  process::Child& c = candidate ? rk.candidate : rk.harness;
  const bool sandboxed = candidate && isolation_ != sandboxing::IsolationKind::kNone;
  const int status = c.wait();
  const std::string how = describe_end(status, sandboxed);
  std::string tail = log_tail(rank, candidate, 800);
  const std::string where = rk.last_phase.empty() ? "" : " (" + rk.last_phase + ")";
  kill_all();
  if (candidate) {
    // Its system-call filter stopped it: the call it made, as its last line names it.
    const bool refused = WIFEXITED(status) && WEXITSTATUS(status) == wire::kCandidateRefusedExit;
    const bool sigsys = (WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS) ||
                        (sandboxed && WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGSYS);
    if (refused || sigsys) {
      const std::string log = log_tail(rank, true, 4000);
      const size_t at = log.rfind(wire::kCandidateRefusedPrefix);
      std::string call = "a system call its filter does not allow (it was killed by SIGSYS)";
      std::string rule = "system-calls";
      if (refused && at != std::string::npos) {
        call = log.substr(at + std::strlen(wire::kCandidateRefusedPrefix));
        call = call.substr(0, call.find('\n'));
        if (const size_t r = call.rfind(wire::kCandidateRefusedRule); r != std::string::npos && call.back() == ')') {
          rule = call.substr(r + std::strlen(wire::kCandidateRefusedRule));
          rule.pop_back();
          call.erase(r);
        }
      }
      RankError e("refused: the candidate's process of rank " + std::to_string(rank) + " made " + call + " (during " +
                      phase + where + ")",
                  RankFault::kDied, wire::Who::kCandidate, phase);
      e.refused = true;
      e.refused_rule = rule;
      throw e;
    }
  }
  throw RankError(rank_name(rank, candidate) + " ended (" + how + ") during " + phase + where +
                      (tail.empty() ? "" : ": " + tail),
                  RankFault::kDied, candidate ? std::optional<wire::Who>(wire::Who::kCandidate) : std::nullopt, phase);
}

void RankGroup::check_alive(const std::string& phase) {
  // A harness outlives its candidate process (it reports the candidate's end and carries
  // on), but a candidate process leaves as soon as its harness is gone. So a dead harness is
  // the cause whenever both have ended.
  for (int r = 0; r < world(); ++r)
    if (ranks_[r].harness.ended()) died(r, false, phase);
  for (int r = 0; r < world(); ++r)
    if (ranks_[r].has_candidate && ranks_[r].candidate.ended()) died(r, true, phase);
}

void RankGroup::handle_request(int rank, const wire::Request& r, std::vector<int>& fds) {
  if (pending_kind_ && *pending_kind_ != r.kind) {
    // Ranks disagree on the sequence of collective calls: a solution bug that would hang.
    for (int fd : fds) ::close(fd);
    kill_all();
    throw RankError("ranks called different collective operations at the same point (rank " + std::to_string(rank) +
                        " asked for " + (r.kind == wire::RequestKind::kSymAlloc ? "sym_alloc" : "barrier") +
                        " while others asked for the other)",
                    RankFault::kSolution, std::nullopt, "collective request");
  }
  pending_kind_ = r.kind;
  pending_arrived_[rank] = true;
  if (r.kind == wire::RequestKind::kSymAlloc) {
    pending_fds_[rank] = fds.empty() ? -1 : fds[0];
    pending_bytes_[rank] = r.bytes;
    fds.clear();
  }
  for (bool a : pending_arrived_)
    if (!a) return;
  // Everyone is here: answer all.
  if (r.kind == wire::RequestKind::kSymAlloc)
    for (int k = 1; k < world(); ++k)
      if (pending_bytes_[k] != pending_bytes_[0]) {
        kill_all();
        throw RankError("ranks asked for symmetric buffers of different sizes (" + std::to_string(pending_bytes_[0]) +
                            " vs " + std::to_string(pending_bytes_[k]) +
                            " bytes): sym_alloc must be called alike on every rank",
                        RankFault::kSolution, std::nullopt, "sym_alloc");
      }
  for (int k = 0; k < world(); ++k) {
    wire::Response resp{r.kind, true, "", 0};
    wire::send(ranks_[k].channel, resp, r.kind == wire::RequestKind::kSymAlloc ? pending_fds_ : std::vector<int>{});
  }
  for (int& fd : pending_fds_)
    if (fd >= 0) ::close(fd), fd = -1;
  pending_kind_.reset();
  pending_arrived_.assign(world(), false);
}

std::string RankGroup::where_each_rank_is(const std::vector<bool>& done, const std::string& phase) const {
  std::string where;
  for (int r = 0; r < world(); ++r)
    if (!done[r])
      where += (where.empty() ? "" : "; ") + std::string("rank ") + std::to_string(r) + ": " +
               (ranks_[r].last_phase.empty() ? phase : ranks_[r].last_phase);
  return where;
}

std::vector<wire::Reply> RankGroup::command(const std::vector<wire::Command>& commands, const std::string& phase,
                                            double timeout_s) {
  const int w = world();
  for (int r = 0; r < w; ++r) {
    ranks_[r].last_phase.clear();
    try {
      wire::send(ranks_[r].channel, commands.size() == 1 ? commands[0] : commands.at(r));
    } catch (const wire::ClosedError&) {
      check_alive(phase);
      died(r, false, phase);
    }
  }
  std::vector<wire::Reply> replies(w);
  std::vector<bool> done(w, false);
  int remaining = w;
  const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s);
  while (remaining > 0) {
    if (interrupted()) {
      kill_all();
      throw Interrupted();
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      std::string tails;
      for (int r = 0; r < w; ++r)
        for (bool cand : {false, true}) {
          if (cand && !ranks_[r].has_candidate) continue;
          std::string t = log_tail(r, cand, 400);
          if (!t.empty()) tails += " | " + rank_name(r, cand) + " said: " + t;
        }
      const std::string where = where_each_rank_is(done, phase);
      kill_all();
      char secs[32];
      snprintf(secs, sizeof(secs), "%.0f", timeout_s);
      throw HangError("hang: no answer within " + std::string(secs) + " s in phase '" + phase + "' (" + where +
                          "); all ranks were killed" + tails,
                      phase);
    }
    std::vector<pollfd> fds(w);
    for (int r = 0; r < w; ++r) fds[r] = {ranks_[r].channel.fd(), POLLIN, 0};
    int rc = ::poll(fds.data(), fds.size(), int(std::min<long long>(left.count(), 200)));
    if (rc < 0 && errno != EINTR) throw Error(std::string("poll: ") + std::strerror(errno));
    if (rc <= 0) {
      check_alive(phase);
      continue;
    }
    for (int r = 0; r < w; ++r) {
      if (!(fds[r].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      wire::Frame f;
      try {
        f = wire::receive(ranks_[r].channel);
      } catch (const wire::ClosedError&) {
        check_alive(phase);
        died(r, false, phase);
      }
      if (auto* p = std::get_if<wire::Phase>(&f.body)) {
        ranks_[r].last_phase = p->what;
      } else if (auto* q = std::get_if<wire::Request>(&f.body)) {
        handle_request(r, *q, f.fds);
      } else if (auto* reply = std::get_if<wire::Reply>(&f.body)) {
        for (int fd : f.fds) ::close(fd);
        if (const wire::Failure* failed = reply->failure()) {
          const bool candidate_code = failed->fault == wire::Fault::kSolution && failed->who == wire::Who::kCandidate;
          // A candidate process that died shows up here first, as its harness's report.
          if (ranks_[r].has_candidate && failed->candidate_gone) died(r, true, phase);
          std::string tail = log_tail(r, candidate_code && ranks_[r].has_candidate, 600);
          const std::string where = ranks_[r].last_phase.empty() ? phase : ranks_[r].last_phase;
          kill_all();
          throw RankError("rank " + std::to_string(r) + ": " + failed->error +
                              (tail.empty() ? "" : " [rank output: " + tail + "]"),
                          failed->fault == wire::Fault::kSolution ? RankFault::kSolution : RankFault::kHarness,
                          failed->who, where);
        }
        if (!done[r]) {
          done[r] = true;
          replies[r] = *reply;
          --remaining;
        }
      } else {
        for (int fd : f.fds) ::close(fd);
        kill_all();
        throw Error("rank " + std::to_string(r) + " sent a frame the launcher does not expect");
      }
    }
  }
  return replies;
}

wire::Reply RankGroup::command_one(int rank, const wire::Command& c, const std::string& phase, double timeout_s) {
  wire::send(ranks_[rank].channel, c);
  const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      kill_all();
      throw HangError("hang: rank " + std::to_string(rank) + " did not answer within the limit in phase '" + phase + "'",
                      phase);
    }
    pollfd p{ranks_[rank].channel.fd(), POLLIN, 0};
    if (::poll(&p, 1, int(std::min<long long>(left.count(), 200))) <= 0) {
      check_alive(phase);
      continue;
    }
    wire::Frame f;
    try {
      f = wire::receive(ranks_[rank].channel);
    } catch (const wire::ClosedError&) {
      died(rank, false, phase);
    }
    for (int fd : f.fds) ::close(fd);
    if (auto* reply = std::get_if<wire::Reply>(&f.body)) {
      if (const wire::Failure* failed = reply->failure()) {
        kill_all();
        throw RankError("rank " + std::to_string(rank) + ": " + failed->error,
                        failed->fault == wire::Fault::kSolution ? RankFault::kSolution : RankFault::kHarness,
                        failed->who, phase);
      }
      return *reply;
    }
  }
}

}  // namespace mgk::eval
