#include "process/spawn.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <sstream>

#include <boost/process.hpp>
#include <boost/process/extend.hpp>

#include "common/error.h"

namespace mgk::process {
namespace bp = boost::process;

namespace {

// Runs in the child between fork and exec: only async-signal-safe calls.
struct ChildSetup : bp::extend::handler {
  Limits limits;
  int output_fd = -1;
  const int* keep = nullptr;
  size_t keep_count = 0;
  ChildHook hook;

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
    rlimit no_core{0, 0};  // a crashing process must not litter its directory with cores
    ::setrlimit(RLIMIT_CORE, &no_core);
    if (output_fd >= 0) {
      ::dup2(output_fd, 1);
      ::dup2(output_fd, 2);
    }
    // Descriptors the parent holds (the store, HTTP sockets, other children's pipes) must
    // not leak into the child. Marked close-on-exec rather than closed, so that Boost's own
    // exec-error pipe still works; the ones to keep are then cleared again.
    constexpr unsigned kCloseRangeCloexec = 1U << 2;
    if (::syscall(SYS_close_range, 3U, ~0U, kCloseRangeCloexec) != 0) {
      rlimit files{};
      int top = (::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur != RLIM_INFINITY)
                    ? int(std::min<rlim_t>(files.rlim_cur, 65536))
                    : 65536;
      for (int fd = 3; fd < top; ++fd) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
    }
    for (size_t i = 0; i < keep_count; ++i) ::fcntl(keep[i], F_SETFD, 0);
    if (hook.run) hook.run(hook.context);
  }
};

std::string resolve_program(const std::string& name, const EnvMap& env) {
  if (name.find('/') != std::string::npos) return name;
  auto path = env.find("PATH");
  auto found = find_program(name, path == env.end() ? "/usr/bin:/bin" : path->second);
  if (found.empty()) throw Error("cannot run '" + name + "': not found on PATH");
  return found.string();
}

}  // namespace

struct Child::Impl {
  bp::child child;
  bp::pipe pipe;
  bool has_pipe = false;
};

Child::Child() = default;
Child::Child(Child&& o) noexcept : impl_(std::move(o.impl_)), pid_(o.pid_), status_(o.status_) { o.pid_ = -1; }
Child& Child::operator=(Child&& o) noexcept {
  if (this != &o) {
    if (pid_ > 0 && !status_) {
      kill_group();
      wait();
    }
    impl_ = std::move(o.impl_);
    pid_ = o.pid_;
    status_ = o.status_;
    o.pid_ = -1;
  }
  return *this;
}

Child::~Child() {
  if (pid_ > 0 && !status_) {
    kill_group();
    wait();
  }
}

int Child::output_fd() const { return impl_ && impl_->has_pipe ? impl_->pipe.native_source() : -1; }

bool Child::ended() const {
  if (status_) return true;
  if (pid_ <= 0) return true;
  siginfo_t info;
  std::memset(&info, 0, sizeof info);
  if (::waitid(P_PID, pid_, &info, WEXITED | WNOHANG | WNOWAIT) != 0) return errno == ECHILD;
  return info.si_pid == pid_;
}

void Child::kill_group(int signal_number) const {
  // Only while it is not reaped: until then the group id cannot belong to anyone else.
  if (pid_ > 0 && !status_) ::kill(-pid_, signal_number);
}

int Child::wait() {
  if (status_) return *status_;
  if (pid_ <= 0) return 0;
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  status_ = status;
  // Boost would otherwise try to terminate and wait for a pid that is already reaped.
  if (impl_) impl_->child.detach();
  return status;
}

Child spawn(const SpawnSpec& spec) {
  if (spec.argv.empty()) throw Error("cannot start a process: empty command line");
  const std::string program = resolve_program(spec.argv[0], spec.env);
  std::vector<std::string> args(spec.argv.begin() + 1, spec.argv.end());
  bp::environment env;
  for (const auto& [name, value] : spec.env) env[name] = value;
  ChildSetup setup;
  setup.limits = spec.limits;
  setup.output_fd = spec.output_fd;
  setup.keep = spec.inherit_fds.data();
  setup.keep_count = spec.inherit_fds.size();
  setup.hook = spec.hook;

  Child c;
  c.impl_ = std::make_unique<Child::Impl>();
  std::error_code ec;
  const std::string dir = spec.working_dir.empty() ? std::filesystem::current_path().string() : spec.working_dir.string();
  if (spec.capture_output) {
    c.impl_->has_pipe = true;
    c.impl_->child = bp::child(bp::exe = program, bp::args = args, env, bp::start_dir = dir, bp::std_in < bp::null,
                               (bp::std_out & bp::std_err) > c.impl_->pipe, setup, ec);
  } else if (spec.output_fd >= 0) {
    c.impl_->child = bp::child(bp::exe = program, bp::args = args, env, bp::start_dir = dir, bp::std_in < bp::null,
                               setup, ec);
  } else {
    c.impl_->child = bp::child(bp::exe = program, bp::args = args, env, bp::start_dir = dir, bp::std_in < bp::null,
                               bp::std_out > bp::null, bp::std_err > bp::null, setup, ec);
  }
  if (ec) throw Error("cannot start '" + spec.argv[0] + "' in " + dir + ": " + ec.message());
  c.pid_ = c.impl_->child.id();
  ::setpgid(c.pid_, c.pid_);  // also from the parent: no window where a kill(-pid) would miss it
  return c;
}

std::filesystem::path find_program(const std::string& name, const std::string& path_list) {
  std::vector<boost::filesystem::path> dirs;
  std::stringstream ss(path_list);
  for (std::string dir; std::getline(ss, dir, ':');)
    if (!dir.empty()) dirs.emplace_back(dir);
  return bp::search_path(name, dirs).string();
}

std::string describe_status(int status) {
  if (WIFEXITED(status)) return "exit " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return "killed by signal " + std::to_string(WTERMSIG(status)) + " (" + ::strsignal(WTERMSIG(status)) + ")";
  return "ended (status " + std::to_string(status) + ")";
}

}  // namespace mgk::process
