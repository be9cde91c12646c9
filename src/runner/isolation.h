// Isolation of sandboxed commands with bubblewrap (bwrap): no network, a read-only view of
// the system, the sandbox directory the only writable place (with a private /tmp and
// /dev/shm), the GPUs' device nodes bound in, the user's home hidden, its own PID namespace
// (a command cannot see mgk's process or its environment), and death with its parent.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

namespace mgk::runner {

struct BubblewrapStatus {
  bool usable = false;
  std::string program;  // the bwrap found on PATH, empty if none
  std::string problem;  // why it is not usable: one line
};

// Finds bwrap on `path_list` (colon-separated) and runs a trivial command in a sandbox with
// the same namespaces the real ones use.
BubblewrapStatus probe_bubblewrap(const std::string& path_list);

// probe_bubblewrap on this process's PATH, once per process (thread-safe), cached.
const BubblewrapStatus& bubblewrap_status();

// The warning printed when commands must run without isolation.
std::string unisolated_warning(const std::string& problem);

struct SandboxLayout {
  std::filesystem::path writable_dir;            // bound read-write; the working directory
  std::vector<std::filesystem::path> hidden;     // each replaced by an empty tmpfs
  std::vector<std::filesystem::path> read_only;  // bound read-only (after hiding)
  bool gpus = true;                              // bind /dev/nvidia* (those that exist)
};

// The bwrap command line that runs a command inside `layout`; the command's argv follows.
std::vector<std::string> bubblewrap_prefix(const std::string& bwrap, const SandboxLayout& layout);

}  // namespace mgk::runner
