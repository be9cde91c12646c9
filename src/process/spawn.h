// The one place mgk starts a process. Every child gets its own process group (one kill of
// the group reaches everything it starts), death with its parent, default signal
// dispositions, resource limits, none of the parent's descriptors but those it is told to
// keep, and its stdout+stderr where the caller says. Isolation (namespaces, bubblewrap) is
// the caller's: a prefix on argv, or a hook that runs in the child before exec.
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mgk::process {

using EnvMap = std::map<std::string, std::string>;

// Limits set with setrlimit in the child before exec; 0 leaves a limit as inherited.
struct Limits {
  // RLIMIT_NPROC counts every process and thread of the real user on the machine, so it
  // stays high: it only stops a fork bomb (root with CAP_SYS_RESOURCE is exempt anyway).
  uint64_t max_processes = 16384;
  uint64_t cpu_seconds = 1800;         // RLIMIT_CPU, per process (SIGXCPU, then SIGKILL)
  uint64_t address_space_bytes = 0;    // RLIMIT_AS: off, the CUDA runtime reserves terabytes
  uint64_t file_size_bytes = uint64_t(8) << 30;  // RLIMIT_FSIZE: the largest file it may write
};

// Code run in the child between fork and exec (entering namespaces, mounting). It may only
// make async-signal-safe calls on data prepared before the fork; when it fails it writes one
// line to fd 2 and calls _exit(kChildSetupFailed).
struct ChildHook {
  void (*run)(const void* context) = nullptr;
  const void* context = nullptr;
};
inline constexpr int kChildSetupFailed = 125;

struct SpawnSpec {
  std::vector<std::string> argv;      // argv[0] without '/' is looked up on env's PATH
  EnvMap env;                         // the complete environment: nothing is inherited
  std::filesystem::path working_dir;  // empty: the parent's
  Limits limits;
  // Where stdout and stderr go: a pipe the caller reads (Child::output_fd), or a file the
  // caller opened (output_fd), or, when neither, /dev/null. stdin is always /dev/null.
  bool capture_output = false;
  int output_fd = -1;
  std::vector<int> inherit_fds;  // kept open across exec, at the same numbers
  ChildHook hook;
};

// A started process. Destroying a Child that still runs kills its group and reaps it.
class Child {
 public:
  Child();
  Child(Child&&) noexcept;
  Child& operator=(Child&&) noexcept;
  ~Child();

  pid_t pid() const { return pid_; }
  int output_fd() const;  // the read end of the captured output, -1 without capture
  // True once the process has ended; it stays a zombie (so its pid, and with it the group
  // id, cannot be reused) until wait().
  bool ended() const;
  void kill_group(int signal_number = 9) const;
  int wait();  // reaps; the raw wait status (W* macros). Idempotent.
  bool reaped() const { return status_.has_value(); }

 private:
  friend Child spawn(const SpawnSpec& spec);
  struct Impl;
  std::unique_ptr<Impl> impl_;
  pid_t pid_ = -1;
  std::optional<int> status_;
};

// Throws mgk::Error (naming the program) when it cannot be started: not found, not
// executable, fork failed. What it does once running is the caller's to watch.
Child spawn(const SpawnSpec& spec);

// The program `name` on the colon-separated `path_list` as exec would find it; empty if none.
std::filesystem::path find_program(const std::string& name, const std::string& path_list);

// One line for a raw wait status: "exit 3", "killed by signal 9 (Killed)".
std::string describe_status(int wait_status);

}  // namespace mgk::process
