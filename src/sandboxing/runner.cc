#include "sandboxing/runner.h"

#include <mutex>
#include <sstream>
#include <system_error>

#include "common/env.h"
#include "common/error.h"
#include "common/log.h"

namespace mgk::sandboxing {
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
}  // namespace

void warn_unisolated_once(const std::string& problem) {
  static std::once_flag once;
  std::call_once(once, [&] { log::warning(unisolated_warning(problem)); });
}

SandboxLayout layout_hiding_home(const fs::path& dir, const EnvMap& parent, const EnvMap& env,
                                 std::vector<fs::path> read_only) {
  SandboxLayout layout;
  layout.writable_dir = dir;
  std::error_code ec;
  auto home = parent.find("HOME");
  if (home != parent.end() && fs::path(home->second).is_absolute() &&
      fs::path(home->second).lexically_normal() != "/" && fs::is_directory(home->second, ec)) {
    const fs::path hidden = fs::canonical(home->second, ec);
    layout.hidden.push_back(hidden);
    for (const char* var : {"PATH", "LD_LIBRARY_PATH"})
      for (const auto& p : split_paths(env, var))
        if (is_under(p, hidden) && fs::exists(p, ec)) read_only.push_back(p);
  }
  layout.read_only = std::move(read_only);
  return layout;
}

Runner::Runner(RunnerOptions options) : options_(std::move(options)) {
  std::error_code ec;
  if (!fs::is_directory(options_.sandbox_dir, ec))
    throw Error("sandbox directory " + options_.sandbox_dir.string() + " does not exist");
  options_.sandbox_dir = fs::canonical(options_.sandbox_dir);
  const EnvMap parent = process::current_environment();
  env_ = scrubbed_environment(parent, options_.extra_env, options_.sandbox_dir);

  if (options_.isolation == IsolationMode::kOff) return;
  const IsolationStatus how = options_.isolation_status ? *options_.isolation_status : isolation_status();
  if (how.kind == IsolationKind::kNone) {
    if (options_.isolation == IsolationMode::kRequire)
      throw Error(how.problem + "; isolation was required: install bubblewrap, or allow user namespaces");
    warn_unisolated_once(how.problem);
    return;
  }
  SandboxLayout layout = options_.hide_home
                             ? layout_hiding_home(options_.sandbox_dir, parent, env_, options_.read_only)
                             : SandboxLayout{options_.sandbox_dir, {}, options_.read_only};
  sandbox_ = std::make_unique<Sandbox>(how, layout);
}

Runner::~Runner() = default;

ProcessResult Runner::run(const std::vector<std::string>& argv, std::optional<double> timeout_s) const {
  process::RunSpec spec;
  spec.argv = sandbox_ ? sandbox_->command(argv) : argv;
  spec.env = env_;
  spec.working_dir = options_.sandbox_dir;
  spec.timeout_s = timeout_s.value_or(options_.timeout_s);
  spec.limits = options_.limits;
  spec.cancel = options_.cancel;
  if (sandbox_) spec.hook = sandbox_->hook();
  return process::run(spec);
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

}  // namespace mgk::sandboxing
