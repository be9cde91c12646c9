// The sandbox runner: runs commands for an attempt in the attempt's own directory, with a
// scrubbed environment (no API keys), resource limits, a timeout that kills everything the
// command started, and isolation by bubblewrap when the machine allows it (a warning, never
// silence, when it does not). The agent's shell mode and its tests go through here.
#pragma once
#include <atomic>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "runner/environment.h"
#include "runner/isolation.h"
#include "runner/process.h"

namespace mgk::runner {

enum class IsolationMode {
  kAuto,     // bubblewrap when usable, else run unisolated with a warning
  kRequire,  // bubblewrap or an error
  kOff,      // no bubblewrap (tests of the fallback; machines where namespaces are banned)
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
  double timeout_s = 60;                      // default per command
  // What is known of bubblewrap here; unset: probe this machine (once per process).
  std::optional<BubblewrapStatus> bubblewrap;
  const std::atomic<bool>* cancel = nullptr;  // set (e.g. by SIGINT): the command is killed
};

class Runner {
 public:
  // Builds the environment and the isolation once. Throws mgk::Error if the sandbox dir does
  // not exist, or if isolation is required and bubblewrap is not usable.
  explicit Runner(RunnerOptions options);

  // Runs argv in the sandbox dir; see run_process for what can throw and what is returned.
  ProcessResult run(const std::vector<std::string>& argv,
                    std::optional<double> timeout_s = std::nullopt) const;
  // Runs `script` with `bash -c` (a fresh shell each time: nothing persists between calls
  // but the files in the sandbox dir).
  ProcessResult run_shell(const std::string& script,
                          std::optional<double> timeout_s = std::nullopt) const;

  bool isolated() const { return !prefix_.empty(); }
  const std::filesystem::path& dir() const { return options_.sandbox_dir; }
  const EnvMap& environment() const { return env_; }

 private:
  RunnerOptions options_;
  EnvMap env_;
  std::vector<std::string> prefix_;  // the bwrap command line, empty when unisolated
};

// The directory of one attempt: home_dir()/sandboxes/<attempt_id>, created if missing,
// returned absolute.
std::filesystem::path make_sandbox_dir(const std::string& attempt_id);

}  // namespace mgk::runner
