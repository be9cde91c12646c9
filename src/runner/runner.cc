#include "runner/runner.h"

#include <mutex>
#include <sstream>
#include <system_error>

#include "common/env.h"
#include "common/error.h"
#include "common/log.h"
#include "runner/isolation.h"

namespace mgk::runner {
namespace fs = std::filesystem;

namespace {
bool is_under(const fs::path& p, const fs::path& dir) {
  auto rel = p.lexically_normal().lexically_relative(dir.lexically_normal());
  return !rel.empty() && *rel.begin() != "..";
}

std::vector<fs::path> split_paths(const EnvMap& env, const char* name) {
  std::vector<fs::path> out;
  auto it = env.find(name);
  if (it == env.end()) return out;
  std::stringstream ss(it->second);
  for (std::string p; std::getline(ss, p, ':');)
    if (!p.empty() && fs::path(p).is_absolute()) out.emplace_back(p);
  return out;
}

// Once per process: a bench starts hundreds of attempts, and one line says it all.
void warn_unisolated_once(const std::string& problem) {
  static std::once_flag once;
  std::call_once(once, [&] { log::warning(unisolated_warning(problem)); });
}
}  // namespace

Runner::Runner(RunnerOptions options) : options_(std::move(options)) {
  std::error_code ec;
  if (!fs::is_directory(options_.sandbox_dir, ec))
    throw Error("sandbox directory " + options_.sandbox_dir.string() + " does not exist");
  options_.sandbox_dir = fs::canonical(options_.sandbox_dir);
  const EnvMap parent = current_environment();
  env_ = scrubbed_environment(parent, options_.extra_env, options_.sandbox_dir);

  if (options_.isolation == IsolationMode::kOff) return;
  const BubblewrapStatus bwrap = options_.bubblewrap ? *options_.bubblewrap : bubblewrap_status();
  if (!bwrap.usable) {
    if (options_.isolation == IsolationMode::kRequire)
      throw Error(bwrap.problem + "; isolation was required: install bubblewrap or allow "
                  "unprivileged user namespaces");
    warn_unisolated_once(bwrap.problem);
    return;
  }
  SandboxLayout layout;
  layout.writable_dir = options_.sandbox_dir;
  layout.read_only = options_.read_only;
  auto home = parent.find("HOME");
  if (options_.hide_home && home != parent.end() && fs::path(home->second).is_absolute() &&
      fs::path(home->second).lexically_normal() != "/" && fs::is_directory(home->second, ec)) {
    const fs::path hidden = fs::canonical(home->second, ec);
    layout.hidden.push_back(hidden);
    for (const char* var : {"PATH", "LD_LIBRARY_PATH"})
      for (const auto& p : split_paths(env_, var))
        if (is_under(p, hidden) && fs::exists(p, ec)) layout.read_only.push_back(p);
  }
  prefix_ = bubblewrap_prefix(bwrap.program, layout);
}

ProcessResult Runner::run(const std::vector<std::string>& argv,
                          std::optional<double> timeout_s) const {
  ProcessSpec spec;
  spec.argv = prefix_;
  spec.argv.insert(spec.argv.end(), argv.begin(), argv.end());
  spec.env = env_;
  spec.working_dir = options_.sandbox_dir;
  spec.timeout_s = timeout_s.value_or(options_.timeout_s);
  spec.limits = options_.limits;
  spec.cancel = options_.cancel;
  return run_process(spec);
}

ProcessResult Runner::run_shell(const std::string& script, std::optional<double> timeout_s) const {
  return run({"bash", "-c", script}, timeout_s);
}

fs::path make_sandbox_dir(const std::string& attempt_id) {
  fs::path dir = fs::absolute(home_dir() / "sandboxes" / attempt_id);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    throw Error("cannot create the sandbox directory " + dir.string() + ": " + ec.message());
  return dir;
}

}  // namespace mgk::runner
