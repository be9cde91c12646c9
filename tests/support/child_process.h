// A program started in the background, for tests that stop it part way (SIGKILL at a
// moment of their choosing). Its stdout and stderr go to a file; it runs in a process group
// of its own, which kill_group() signals whole (the program and what it started, as a
// job scheduler or the OOM killer stops a job). It is killed when the thread that started it
// ends (PR_SET_PDEATHSIG), so a test killed by its timeout leaves it not running.
#pragma once
#include <sys/types.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace mgk::test {

class ChildProcess {
 public:
  // `env`: variables set on top of this process's environment.
  ChildProcess(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
               const std::filesystem::path& output);
  ~ChildProcess();  // SIGKILLs the group and reaps it if still running
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  void kill_group(int signal);
  bool running();
  // Waits for the end: the exit code, or 128 + the signal that ended it.
  int wait();

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
  int status_ = 0;
};

}  // namespace mgk::test
