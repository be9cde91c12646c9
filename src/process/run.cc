#include "process/run.h"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>
#include <sstream>
#include <thread>

#include "common/error.h"
#include "common/interrupt.h"

extern char** environ;

namespace mgk::process {
namespace {

using Clock = std::chrono::steady_clock;

// When the leader has exited but something it started still holds the output pipe, it gets
// this long to finish writing before the group is killed.
constexpr double kLeftoverGraceSeconds = 0.5;
// After the group was killed, how long to wait for the pipe to close (a process that left
// the group with setsid could hold it forever).
constexpr double kDrainSeconds = 2.0;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Reads what is available within `wait_ms`; false at end of file (or a read error).
bool read_some(int fd, int wait_ms, OutputCollector& out) {
  pollfd p{fd, POLLIN, 0};
  int ready = ::poll(&p, 1, wait_ms);
  if (ready <= 0) return true;  // nothing yet (or EINTR)
  char buf[65536];
  ssize_t n = ::read(fd, buf, sizeof buf);
  if (n > 0) {
    out.append(std::string_view(buf, size_t(n)));
    return true;
  }
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return true;
  return false;
}

}  // namespace

std::string ProcessResult::status_line(double timeout_s) const {
  std::ostringstream s;
  if (timed_out) {
    s << "timed out after " << timeout_s << " s (the command and everything it started were killed)";
  } else if (cancelled) {
    s << "cancelled (interrupted; the command and everything it started were killed)";
  } else if (signal != 0) {
    s << "killed by signal " << signal << " (" << ::strsignal(signal) << ")";
  } else {
    s << "exit " << exit_code;
  }
  return s.str();
}

ProcessResult run(const RunSpec& spec) {
  SpawnSpec sp;
  sp.argv = spec.argv;
  sp.env = spec.env;
  sp.working_dir = spec.working_dir;
  sp.limits = spec.limits;
  sp.capture_output = true;
  sp.hook = spec.hook;
  OutputCollector output(spec.output_limit, spec.output_keep);
  const auto start = Clock::now();
  Child child = spawn(sp);

  ProcessResult result;
  const int fd = child.output_fd();
  bool eof = false;
  std::optional<Clock::time_point> leader_exit;
  while (true) {
    if (!eof) {
      double left = spec.timeout_s - seconds_since(start);
      eof = !read_some(fd, std::clamp(int(left * 1000), 0, 50), output);
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (!leader_exit && child.ended()) leader_exit = Clock::now();
    if (leader_exit && (eof || seconds_since(*leader_exit) > kLeftoverGraceSeconds)) break;
    if ((spec.cancel != nullptr && spec.cancel->load()) || (spec.also_cancel != nullptr && spec.also_cancel->load())) {
      result.cancelled = true;
      break;
    }
    if (seconds_since(start) >= spec.timeout_s) {
      result.timed_out = true;
      break;
    }
  }
  // The leader is not reaped yet, so the group id is still ours to kill.
  child.kill_group();
  const auto drain_start = Clock::now();
  while (!eof && seconds_since(drain_start) < kDrainSeconds) eof = !read_some(fd, 50, output);
  const int status = child.wait();
  result.wall_seconds = seconds_since(start);
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  if (result.timed_out || result.cancelled) result.exit_code = -1;
  result.output = output.text();
  result.output_bytes = output.total_bytes();
  return result;
}

EnvMap current_environment() {
  EnvMap env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string entry(*e);
    auto eq = entry.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    env.emplace(entry.substr(0, eq), entry.substr(eq + 1));
  }
  return env;
}

ProcessResult run_tool(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                       const std::filesystem::path& cwd, const EnvMap& extra_env) {
  RunSpec spec;
  spec.argv = argv;
  spec.env = current_environment();
  for (const auto& [k, v] : extra_env) spec.env[k] = v;
  spec.working_dir = cwd;
  spec.timeout_s = std::chrono::duration<double>(timeout).count();
  spec.limits = Limits{0, 0, 0, 0};
  spec.cancel = &interrupt_flag();
  spec.output_limit = size_t(16) << 20;
  spec.output_keep = size_t(8) << 20;
  ProcessResult r = run(spec);
  if (r.cancelled) throw Interrupted();
  return r;
}

}  // namespace mgk::process
