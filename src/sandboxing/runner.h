// The sandbox runner: runs commands for an attempt in the attempt's own directory, with a
// scrubbed environment (no API keys), resource limits, a timeout that kills everything the
// command started, and isolation (bubblewrap, else the kernel's namespaces) when the machine
// allows it (a warning, never silence, when it does not). The agent's shell mode goes
// through here.
#pragma once
#include <atomic>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "process/run.h"
#include "sandboxing/environment.h"
#include "sandboxing/isolation.h"

namespace mgk::sandboxing {

using process::ProcessResult;
using ResourceLimits = process::Limits;

enum class IsolationMode {
  kAuto,     // bubblewrap, else namespaces, else run unisolated with a warning
  kRequire,  // isolation or an error
  kOff,      // none (tests of the fallback; machines where namespaces are banned)
};

struct RunnerOptions {
  std::filesystem::path sandbox_dir;  // must exist; the working directory and, isolated, the
                                      // only writable place besides a private /tmp
  IsolationMode isolation = IsolationMode::kAuto;
  EnvMap extra_env;  // set on top of the scrubbed parent environment (PATH, MGK_DB, ...)
  // Isolated: the user's home is hidden (credentials live there). These paths are bound
  // back read-only; entries of PATH and LD_LIBRARY_PATH under the home are added as well.
  std::vector<std::filesystem::path> read_only;
  bool hide_home = true;
  ResourceLimits limits;
  double timeout_s = 60;  // default per command
  // What isolation this machine has; unset: probe it (once per process).
  std::optional<IsolationStatus> isolation_status;
  const std::atomic<bool>* cancel = nullptr;  // set (e.g. by SIGINT): the command is killed
};

class Runner {
 public:
  // Builds the environment and the isolation once. Throws mgk::Error if the sandbox dir does
  // not exist, or if isolation is required and none is usable.
  explicit Runner(RunnerOptions options);
  ~Runner();

  // Runs argv in the sandbox dir; see process::run for what can throw and what is returned.
  ProcessResult run(const std::vector<std::string>& argv, std::optional<double> timeout_s = std::nullopt) const;
  // Runs `script` with `bash -c` (a fresh shell each time: nothing persists between calls
  // but the files in the sandbox dir).
  ProcessResult run_shell(const std::string& script, std::optional<double> timeout_s = std::nullopt) const;

  bool isolated() const { return sandbox_ && sandbox_->isolated(); }
  IsolationKind isolation() const { return sandbox_ ? sandbox_->kind() : IsolationKind::kNone; }
  const std::filesystem::path& dir() const { return options_.sandbox_dir; }
  const EnvMap& environment() const { return env_; }

 private:
  RunnerOptions options_;
  EnvMap env_;
  std::unique_ptr<Sandbox> sandbox_;  // null when unisolated
};

// The layout of a sandbox for a process that works in `dir`: the user's home (from `parent`)
// hidden, with `read_only` and the entries of PATH and LD_LIBRARY_PATH (from `env`) that lie
// under it bound back read-only.
SandboxLayout layout_hiding_home(const std::filesystem::path& dir, const EnvMap& parent, const EnvMap& env,
                                 std::vector<std::filesystem::path> read_only);

// Once per process: a bench starts hundreds of attempts, and one line says it all.
void warn_unisolated_once(const std::string& problem);

// The directory of one attempt: home_dir()/sandboxes/<attempt_id>, created if missing,
// returned absolute.
std::filesystem::path make_sandbox_dir(const std::string& attempt_id);

}  // namespace mgk::sandboxing
