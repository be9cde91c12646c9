// Runs a program (no shell) and captures its combined output, with a timeout that kills
// its whole process group. For tools mgk drives itself (nvcc, the harness probe); commands
// from a model go through the sandbox runner (src/runner/) instead.
#pragma once
#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace mgk {

struct ProcessResult {
  int exit_code = -1;      // -1 when killed by a signal or on timeout
  int signal = 0;
  bool timed_out = false;
  std::string output;      // stdout and stderr, interleaved
  double seconds = 0;
};

// Throws mgk::Error when the program cannot be started (not found, not executable).
ProcessResult run_process(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                          const std::filesystem::path& cwd = {},
                          const std::map<std::string, std::string>& extra_env = {});

// Directory of the running executable (/proc/self/exe), to find mgk-harness beside mgk.
std::filesystem::path self_dir();

}  // namespace mgk
