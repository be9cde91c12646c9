#include "runner/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <optional>
#include <sstream>
#include <thread>

#include <boost/process.hpp>
#include <boost/process/extend.hpp>

#include "common/error.h"

namespace mgk::runner {
namespace bp = boost::process;
namespace {

using Clock = std::chrono::steady_clock;

// When the leader has exited but something it started still holds the output pipe, it gets
// this long to finish writing before the group is killed.
constexpr double kLeftoverGraceSeconds = 0.5;
// After the group was killed, how long to wait for the pipe to close (a process that left
// the group with setsid could hold it forever).
constexpr double kDrainSeconds = 2.0;

// Runs in the child between fork and exec: only async-signal-safe calls.
struct ChildSetup : bp::extend::handler {
  ResourceLimits limits;

  static void set_limit(int resource, uint64_t value) {
    if (value == 0) return;
    rlimit current{};
    if (::getrlimit(resource, &current) != 0) return;
    rlim_t v = static_cast<rlim_t>(value);
    if (current.rlim_max != RLIM_INFINITY && v > current.rlim_max) v = current.rlim_max;
    rlimit wanted{v, current.rlim_max};
    ::setrlimit(resource, &wanted);
  }

  template <typename Executor>
  void on_exec_setup(Executor&) const {
    ::setpgid(0, 0);  // its own group, so that one kill(-pgid) reaches everything it starts
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);  // a blocked mask would survive exec
    for (int s : {SIGPIPE, SIGINT, SIGTERM, SIGQUIT, SIGHUP}) ::signal(s, SIG_DFL);
    set_limit(RLIMIT_NPROC, limits.max_processes);
    set_limit(RLIMIT_CPU, limits.cpu_seconds);
    set_limit(RLIMIT_AS, limits.address_space_bytes);
    set_limit(RLIMIT_FSIZE, limits.file_size_bytes);
    rlimit no_core{0, 0};  // a crashing candidate must not litter the sandbox with cores
    ::setrlimit(RLIMIT_CORE, &no_core);
    // Descriptors the parent holds (the store, HTTP sockets, other commands' pipes) must
    // not leak into the command. Marked close-on-exec rather than closed, so that Boost's
    // own exec-error pipe still works.
    constexpr unsigned kCloseRangeCloexec = 1U << 2;
    if (::syscall(SYS_close_range, 3U, ~0U, kCloseRangeCloexec) != 0) {
      rlimit files{};
      int top = (::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur != RLIM_INFINITY)
                    ? int(std::min<rlim_t>(files.rlim_cur, 65536))
                    : 65536;
      for (int fd = 3; fd < top; ++fd) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
    }
  }
};

// True once `pid` has terminated; leaves it a zombie so its pid (and so its process-group
// id) cannot be reused before the group is killed.
bool exited_without_reaping(pid_t pid) {
  siginfo_t info;
  std::memset(&info, 0, sizeof info);
  if (::waitid(P_PID, pid, &info, WEXITED | WNOHANG | WNOWAIT) != 0) return errno == ECHILD;
  return info.si_pid == pid;
}

std::string resolve_program(const std::string& name, const EnvMap& env) {
  if (name.find('/') != std::string::npos) return name;
  auto path = env.find("PATH");
  auto found = find_program(name, path == env.end() ? "/usr/bin:/bin" : path->second);
  if (found.empty()) throw Error("cannot run '" + name + "': not found on the sandbox's PATH");
  return found.string();
}

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

std::filesystem::path find_program(const std::string& name, const std::string& path_list) {
  std::vector<boost::filesystem::path> dirs;
  std::stringstream ss(path_list);
  for (std::string dir; std::getline(ss, dir, ':');)
    if (!dir.empty()) dirs.emplace_back(dir);
  return bp::search_path(name, dirs).string();
}

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

ProcessResult run_process(const ProcessSpec& spec) {
  if (spec.argv.empty()) throw Error("run_process: empty command line");
  const std::string program = resolve_program(spec.argv[0], spec.env);
  std::vector<std::string> args(spec.argv.begin() + 1, spec.argv.end());
  bp::environment env;
  for (const auto& [name, value] : spec.env) env[name] = value;

  OutputCollector output(spec.output_limit, spec.output_keep);
  bp::pipe pipe;
  const auto start = Clock::now();
  std::error_code ec;
  ChildSetup setup;
  setup.limits = spec.limits;
  bp::child child(bp::exe = program, bp::args = args, env,
                  bp::start_dir = spec.working_dir.string(), bp::std_in < bp::null,
                  (bp::std_out & bp::std_err) > pipe, setup, ec);
  if (ec)
    throw Error("cannot start '" + spec.argv[0] + "' in " + spec.working_dir.string() + ": " +
                ec.message());
  const pid_t pid = child.id();
  ::setpgid(pid, pid);  // also from the parent: no window where a kill(-pid) would miss it

  ProcessResult result;
  const int fd = pipe.native_source();
  bool eof = false;
  std::optional<Clock::time_point> leader_exit;
  while (true) {
    if (!eof) {
      double left = spec.timeout_s - seconds_since(start);
      eof = !read_some(fd, std::clamp(int(left * 1000), 0, 50), output);
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (!leader_exit && exited_without_reaping(pid)) leader_exit = Clock::now();
    if (leader_exit && (eof || seconds_since(*leader_exit) > kLeftoverGraceSeconds)) break;
    if (spec.cancel != nullptr && spec.cancel->load()) {
      result.cancelled = true;
      break;
    }
    if (seconds_since(start) >= spec.timeout_s) {
      result.timed_out = true;
      break;
    }
  }
  // The leader is not reaped yet, so the group id is still ours to kill.
  ::kill(-pid, SIGKILL);
  const auto drain_start = Clock::now();
  while (!eof && seconds_since(drain_start) < kDrainSeconds) eof = !read_some(fd, 50, output);
  child.wait(ec);
  result.wall_seconds = seconds_since(start);

  const int status = child.native_exit_code();
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  result.output = output.text();
  result.output_bytes = output.total_bytes();
  return result;
}

}  // namespace mgk::runner
