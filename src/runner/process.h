// One child process with a deadline: started in its own process group with resource limits,
// stdout and stderr merged into one bounded stream, and the whole group killed (SIGKILL to
// -pgid) when the deadline passes or the caller cancels, with what it printed so far kept.
// Isolation (bubblewrap) and the environment are decided by the caller (runner.h).
#pragma once
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "runner/environment.h"
#include "runner/output.h"

namespace mgk::runner {

// Limits applied with setrlimit in the child before exec; 0 leaves a limit as inherited.
struct ResourceLimits {
  // RLIMIT_NPROC: processes + threads of the real user, all of them, not only the child's;
  // the kernel does not enforce it for root. Bounds fork bombs together with the timeout.
  uint64_t max_processes = 4096;
  uint64_t cpu_seconds = 1800;  // RLIMIT_CPU, per process (SIGXCPU, then SIGKILL)
  // RLIMIT_AS: off by default because the CUDA runtime reserves a very large address space.
  uint64_t address_space_bytes = 0;
  uint64_t file_size_bytes = uint64_t(8) << 30;  // RLIMIT_FSIZE: largest file it may write
};

struct ProcessSpec {
  std::vector<std::string> argv;  // argv[0] without '/' is looked up on env's PATH
  EnvMap env;                     // the complete environment (nothing is inherited)
  std::filesystem::path working_dir;
  double timeout_s = 60;
  ResourceLimits limits;
  const std::atomic<bool>* cancel = nullptr;  // when it becomes true the group is killed
  size_t output_limit = kOutputLimit;
  size_t output_keep = kOutputKeep;
};

struct ProcessResult {
  int exit_code = -1;      // the exit status when it exited normally, else -1
  int signal = 0;          // the signal that ended it, else 0
  bool timed_out = false;  // killed at the deadline
  bool cancelled = false;  // killed because spec.cancel became true
  std::string output;      // stdout+stderr merged, cut in the middle, valid UTF-8
  size_t output_bytes = 0; // how many bytes it printed in all
  double wall_seconds = 0;

  bool ok() const { return exit_code == 0 && !timed_out && !cancelled; }
  // "exit 0", "exit 2", "killed by signal 9 (Killed)", "timed out after 5 s", ...
  std::string status_line(double timeout_s) const;
};

// The program `name` on the colon-separated `path_list` as exec would find it; empty if none.
std::filesystem::path find_program(const std::string& name, const std::string& path_list);

// Runs the process to completion, the deadline, or cancellation. Throws mgk::Error only
// when it cannot be started (no such program, fork failure); anything the process does is
// in the result. Once the leader has exited, whatever else remains in its group is killed:
// nothing a command starts outlives it.
ProcessResult run_process(const ProcessSpec& spec);

}  // namespace mgk::runner
