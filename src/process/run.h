// Running a process to completion: a deadline, cancellation (Ctrl-C), and its output kept
// within a bound, cut in the middle. Built on spawn(); used for mgk's own tools (nvcc, the
// harness probe) and, through the sandbox runner (src/sandboxing/), for a model's commands.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "process/output.h"
#include "process/spawn.h"

namespace mgk::process {

struct RunSpec {
  std::vector<std::string> argv;  // argv[0] without '/' is looked up on env's PATH
  EnvMap env;                     // the complete environment (nothing is inherited)
  std::filesystem::path working_dir;
  double timeout_s = 60;
  Limits limits;
  const std::atomic<bool>* cancel = nullptr;  // when it becomes true the group is killed
  const std::atomic<bool>* also_cancel = nullptr;  // a second such flag (the caller's own, beside Ctrl-C's)
  size_t output_limit = kOutputLimit;
  size_t output_keep = kOutputKeep;
  ChildHook hook;  // isolation entered in the child (see spawn.h)
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

// Runs the process to completion, the deadline, or cancellation. Throws mgk::Error only
// when it cannot be started (no such program, fork failure); anything the process does is
// in the result. Once the leader has exited, whatever else remains in its group is killed:
// nothing a command starts outlives it.
ProcessResult run(const RunSpec& spec);

// This process's environment as a map (from `environ`).
EnvMap current_environment();

// For the tools mgk drives itself: `argv` with this process's environment (plus `extra_env`
// on top), output kept whole up to 16 MiB, killed after `timeout`. Ctrl-C kills it and
// throws mgk::Interrupted: a cancelled tool's empty output must never be read as its answer.
ProcessResult run_tool(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                       const std::filesystem::path& cwd = {}, const EnvMap& extra_env = {});

}  // namespace mgk::process
