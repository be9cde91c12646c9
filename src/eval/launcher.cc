#include "eval/launcher.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>

#include "common/interrupt.h"
#include "common/log.h"

namespace mgk::eval {

namespace fs = std::filesystem;

RankGroup::RankGroup(const fs::path& harness, const std::vector<int>& gpus, const fs::path& work_dir) {
  if (!fs::exists(harness))
    throw Error("the harness binary is missing: " + harness.string() + " (rebuild mgk, or set MGK_HARNESS)");
  fs::create_directories(work_dir);
  socket_path_ = (work_dir / "broker.sock").string();
  wire::Listener listener(socket_path_.string());
  int world = int(gpus.size());
  ranks_.resize(world);
  pending_arrived_.assign(world, false);
  pending_fds_.assign(world, -1);
  pending_bytes_.assign(world, 0);
  for (int r = 0; r < world; ++r) {
    ranks_[r].log = work_dir / ("rank" + std::to_string(r) + ".log");
    std::vector<std::string> args = {harness.string(), "--socket", socket_path_.string(), "--rank", std::to_string(r),
                                     "--world", std::to_string(world), "--device", std::to_string(gpus[r])};
    pid_t pid = fork();
    if (pid < 0) throw Error(std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
      setpgid(0, 0);
      int fd = ::open(ranks_[r].log.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
      if (fd >= 0) dup2(fd, 1), dup2(fd, 2);
      int devnull = ::open("/dev/null", O_RDONLY);
      if (devnull >= 0) dup2(devnull, 0);
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    setpgid(pid, pid);
    ranks_[r].pid = pid;
  }
  // Ranks connect in any order: accept them all, then ask each which rank it is.
  std::vector<wire::Channel> pending;
  for (int i = 0; i < world; ++i) {
    try {
      pending.push_back(listener.accept(std::chrono::seconds(60)));
    } catch (const Error& e) {
      for (int r = 0; r < world; ++r) {
        int status;
        if (waitpid(ranks_[r].pid, &status, WNOHANG) == ranks_[r].pid) {
          ranks_[r].alive = false;
          throw RankError("rank " + std::to_string(r) + " of the harness exited before connecting: " +
                              rank_log_tail(r, 600),
                          "harness", "", "start");
        }
      }
      throw;
    }
  }
  for (auto& c : pending) {
    c.send({{"cmd", "whoami"}});
    wire::Message m = c.receive();
    int r = m.body.value("rank", -1);
    if (r < 0 || r >= world) throw Error("harness sent a bad hello: " + m.body.dump());
    ranks_[r].channel = std::move(c);
  }
}

RankGroup::~RankGroup() {
  for (auto& rk : ranks_) {
    if (rk.alive && rk.channel.valid()) {
      try {
        rk.channel.send({{"cmd", "exit"}});
      } catch (const std::exception&) {
      }
    }
  }
  // Give clean exits a moment, then make sure.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  for (auto& rk : ranks_) {
    while (rk.alive && rk.pid > 0) {
      int status;
      pid_t w = waitpid(rk.pid, &status, WNOHANG);
      if (w == rk.pid || w < 0) {
        rk.alive = false;
        break;
      }
      if (std::chrono::steady_clock::now() > deadline) {
        kill(-rk.pid, SIGKILL);
        waitpid(rk.pid, &status, 0);
        rk.alive = false;
        break;
      }
      usleep(5000);
    }
  }
}

void RankGroup::kill_all() {
  for (auto& rk : ranks_)
    if (rk.alive && rk.pid > 0) kill(-rk.pid, SIGKILL);
  for (auto& rk : ranks_)
    if (rk.alive && rk.pid > 0) {
      int status;
      waitpid(rk.pid, &status, 0);
      rk.alive = false;
    }
}

std::string RankGroup::rank_log_tail(int rank, size_t max_chars) const {
  std::ifstream in(ranks_[rank].log);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  if (s.size() > max_chars) s = "..." + s.substr(s.size() - max_chars);
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

void RankGroup::rank_died(int rank, const std::string& phase) {
  int status = 0;
  pid_t w = waitpid(ranks_[rank].pid, &status, 0);
  ranks_[rank].alive = false;
  std::string how = "ended";
  if (w == ranks_[rank].pid) {
    if (WIFSIGNALED(status)) how = std::string("was killed by signal ") + strsignal(WTERMSIG(status));
    else if (WIFEXITED(status)) how = "exited with code " + std::to_string(WEXITSTATUS(status));
  }
  std::string tail = rank_log_tail(rank, 800);
  kill_all();
  throw RankError("rank " + std::to_string(rank) + " " + how + " during " + phase +
                      (ranks_[rank].last_phase.empty() ? "" : " (" + ranks_[rank].last_phase + ")") +
                      (tail.empty() ? "" : ": " + tail),
                  "died", "", phase);
}

void RankGroup::handle_request(int rank, wire::Message& m) {
  std::string kind = m.body.value("req", "");
  if (kind != "sym_alloc" && kind != "barrier") {
    for (int fd : m.fds) close(fd);
    ranks_[rank].channel.send({{"type", "resp"}, {"req", kind}, {"ok", false}, {"error", "unknown request"}});
    return;
  }
  if (!pending_kind_.empty() && pending_kind_ != kind) {
    // Ranks disagree on the sequence of collective calls: a solution bug that would hang.
    kill_all();
    throw RankError("ranks called different collective operations at the same point (rank " + std::to_string(rank) +
                        " asked for " + kind + " while others asked for " + pending_kind_ + ")",
                    "solution", "", kind);
  }
  pending_kind_ = kind;
  pending_arrived_[rank] = true;
  if (kind == "sym_alloc") {
    pending_fds_[rank] = m.fds.empty() ? -1 : m.fds[0];
    pending_bytes_[rank] = m.body.value("bytes", 0ull);
  }
  for (bool a : pending_arrived_)
    if (!a) return;
  // Everyone is here: answer all.
  if (kind == "sym_alloc") {
    for (int r = 1; r < world(); ++r)
      if (pending_bytes_[r] != pending_bytes_[0]) {
        kill_all();
        throw RankError("ranks asked for symmetric buffers of different sizes (" + std::to_string(pending_bytes_[0]) +
                            " vs " + std::to_string(pending_bytes_[r]) + " bytes): sym_alloc must be called alike on every rank",
                        "solution", "", "sym_alloc");
      }
  }
  for (int r = 0; r < world(); ++r) {
    nlohmann::json resp{{"type", "resp"}, {"req", kind}, {"ok", true}};
    if (kind == "sym_alloc") ranks_[r].channel.send(resp, pending_fds_);
    else ranks_[r].channel.send(resp);
  }
  for (int& fd : pending_fds_)
    if (fd >= 0) close(fd), fd = -1;
  pending_kind_.clear();
  pending_arrived_.assign(world(), false);
}

std::vector<nlohmann::json> RankGroup::command(const std::vector<nlohmann::json>& bodies, const std::string& phase,
                                               double timeout_s) {
  int w = world();
  for (int r = 0; r < w; ++r) {
    ranks_[r].last_phase.clear();
    try {
      ranks_[r].channel.send(bodies.size() == 1 ? bodies[0] : bodies.at(r));
    } catch (const wire::ClosedError&) {
      rank_died(r, phase);
    }
  }
  std::vector<nlohmann::json> replies(w);
  std::vector<bool> done(w, false);
  int remaining = w;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (remaining > 0) {
    if (interrupted()) {
      kill_all();
      throw Interrupted();
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      std::string where;
      for (int r = 0; r < w; ++r)
        if (!done[r])
          where += (where.empty() ? "" : "; ") + std::string("rank ") + std::to_string(r) + ": " +
                   (ranks_[r].last_phase.empty() ? phase : ranks_[r].last_phase);
      std::string tails;
      for (int r = 0; r < w; ++r) {
        std::string t = rank_log_tail(r, 400);
        if (!t.empty()) tails += " | rank " + std::to_string(r) + " said: " + t;
      }
      kill_all();
      char secs[32];
      snprintf(secs, sizeof(secs), "%.0f", timeout_s);
      throw HangError("hang: no answer within " + std::string(secs) + " s in phase '" + phase + "' (" + where +
                          "); all ranks were killed" + tails,
                      phase);
    }
    std::vector<pollfd> fds(w);
    for (int r = 0; r < w; ++r) fds[r] = {ranks_[r].channel.fd(), POLLIN, 0};
    int rc = poll(fds.data(), fds.size(), int(std::min<long long>(left.count(), 200)));
    if (rc < 0 && errno != EINTR) throw Error(std::string("poll: ") + std::strerror(errno));
    if (rc <= 0) continue;
    for (int r = 0; r < w; ++r) {
      if (!(fds[r].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      wire::Message m;
      try {
        m = ranks_[r].channel.receive();
      } catch (const wire::ClosedError&) {
        rank_died(r, phase);
      }
      std::string type = m.body.value("type", "");
      if (type == "phase") {
        ranks_[r].last_phase = m.body.value("phase", "");
      } else if (type == "req") {
        handle_request(r, m);
      } else if (type == "reply") {
        if (!m.body.value("ok", false)) {
          std::string who = m.body.value("who", "");
          std::string fault = m.body.value("fault", "harness");
          std::string msg = m.body.value("error", "failed");
          std::string tail = rank_log_tail(r, 600);
          kill_all();
          throw RankError("rank " + std::to_string(r) + ": " + msg + (tail.empty() ? "" : " [rank output: " + tail + "]"),
                          fault, who, ranks_[r].last_phase.empty() ? phase : ranks_[r].last_phase);
        }
        if (!done[r]) {
          done[r] = true;
          replies[r] = std::move(m.body);
          --remaining;
        }
      }
    }
  }
  return replies;
}

nlohmann::json RankGroup::command_one(int rank, const nlohmann::json& body, const std::string& phase, double timeout_s) {
  ranks_[rank].channel.send(body);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      kill_all();
      throw HangError("hang: rank " + std::to_string(rank) + " did not answer within the limit in phase '" + phase + "'", phase);
    }
    pollfd p{ranks_[rank].channel.fd(), POLLIN, 0};
    int rc = poll(&p, 1, int(left.count()));
    if (rc <= 0) continue;
    wire::Message m;
    try {
      m = ranks_[rank].channel.receive();
    } catch (const wire::ClosedError&) {
      rank_died(rank, phase);
    }
    if (m.body.value("type", "") == "reply") {
      if (!m.body.value("ok", false)) {
        std::string msg = m.body.value("error", "failed");
        kill_all();
        throw RankError("rank " + std::to_string(rank) + ": " + msg, m.body.value("fault", "harness"), "", phase);
      }
      return m.body;
    }
  }
}

}  // namespace mgk::eval
