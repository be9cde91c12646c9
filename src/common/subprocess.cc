#include "common/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/error.h"

extern char** environ;

namespace mgk {

ProcessResult run_process(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                          const std::filesystem::path& cwd, const std::map<std::string, std::string>& extra_env) {
  if (argv.empty()) throw Error("run_process: empty command");
  int pipefd[2];
  if (pipe2(pipefd, O_CLOEXEC) != 0) throw Error(std::string("pipe: ") + std::strerror(errno));
  // An exec failure is reported through a second pipe so the parent can raise a clear error.
  int errpipe[2];
  if (pipe2(errpipe, O_CLOEXEC) != 0) throw Error(std::string("pipe: ") + std::strerror(errno));
  auto start = std::chrono::steady_clock::now();
  pid_t pid = fork();
  if (pid < 0) throw Error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    setpgid(0, 0);
    dup2(pipefd[1], 1);
    dup2(pipefd[1], 2);
    if (!cwd.empty() && chdir(cwd.c_str()) != 0) _exit(126);
    for (const auto& [k, v] : extra_env) setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    int e = errno;
    (void)!write(errpipe[1], &e, sizeof(e));
    _exit(127);
  }
  setpgid(pid, pid);
  close(pipefd[1]);
  close(errpipe[1]);
  int exec_errno = 0;
  bool exec_failed = read(errpipe[0], &exec_errno, sizeof(exec_errno)) == sizeof(exec_errno);
  close(errpipe[0]);
  ProcessResult r;
  if (exec_failed) {
    close(pipefd[0]);
    waitpid(pid, nullptr, 0);
    throw Error("cannot run '" + argv[0] + "': " + std::strerror(exec_errno));
  }
  auto deadline = start + timeout;
  char buf[65536];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      kill(-pid, SIGKILL);
      r.timed_out = true;
      break;
    }
    pollfd p{pipefd[0], POLLIN, 0};
    int rc = poll(&p, 1, int(std::min<long long>(left.count(), 1000)));
    if (rc < 0 && errno != EINTR) break;
    if (rc <= 0) continue;
    ssize_t n = read(pipefd[0], buf, sizeof(buf));
    if (n <= 0) break;
    r.output.append(buf, size_t(n));
  }
  close(pipefd[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  if (r.timed_out) r.exit_code = -1;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

std::filesystem::path self_dir() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::current_path() : p.parent_path();
}

}  // namespace mgk
