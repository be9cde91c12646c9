#include "runner/isolation.h"

#include <system_error>

#include "runner/process.h"

namespace mgk::runner {
namespace fs = std::filesystem;

namespace {
std::vector<fs::path> gpu_device_nodes() {
  std::vector<fs::path> nodes;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/dev", ec)) {
    if (entry.path().filename().string().rfind("nvidia", 0) == 0) nodes.push_back(entry.path());
  }
  return nodes;
}

}  // namespace

BubblewrapStatus probe_bubblewrap(const std::string& path_list) {
  BubblewrapStatus status;
  const std::string bwrap = find_program("bwrap", path_list).string();
  if (bwrap.empty()) {
    status.problem = "bubblewrap (bwrap) is not installed";
    return status;
  }
  status.program = bwrap;
  try {
    SandboxLayout layout;
    layout.writable_dir = fs::temp_directory_path();
    ProcessSpec trial;
    trial.argv = bubblewrap_prefix(bwrap, layout);
    trial.argv.push_back("true");
    trial.env = {{"PATH", "/usr/bin:/bin"}};
    trial.working_dir = "/";
    trial.timeout_s = 20;
    ProcessResult ran = run_process(trial);
    if (!ran.ok()) {
      std::string why = ran.output.substr(0, ran.output.find('\n'));
      status.problem = "bwrap cannot create a sandbox here (" +
                       (why.empty() ? ran.status_line(trial.timeout_s) : why) + ")";
      return status;
    }
  } catch (const std::exception& e) {
    status.problem = std::string("bwrap could not be tried: ") + e.what();
    return status;
  }
  status.usable = true;
  return status;
}

const BubblewrapStatus& bubblewrap_status() {
  static const BubblewrapStatus status = [] {
    EnvMap env = current_environment();
    return probe_bubblewrap(env.count("PATH") ? env["PATH"] : "/usr/bin:/bin");
  }();
  return status;
}

std::string unisolated_warning(const std::string& problem) {
  return problem + ": sandboxed commands run WITHOUT isolation (they can reach the network, "
         "write outside their directory and see other processes); install bubblewrap and allow "
         "user namespaces to isolate them";
}

std::vector<std::string> bubblewrap_prefix(const std::string& bwrap, const SandboxLayout& layout) {
  std::vector<std::string> a = {bwrap,           "--die-with-parent", "--unshare-net",
                                "--unshare-pid", "--unshare-ipc",     "--unshare-uts",
                                "--ro-bind",     "/",                 "/",
                                "--dev",         "/dev",              "--proc",
                                "/proc",         "--tmpfs",           "/tmp"};
  if (layout.gpus)
    for (const auto& node : gpu_device_nodes()) {
      a.insert(a.end(), {"--dev-bind", node.string(), node.string()});
    }
  for (const auto& p : layout.hidden) a.insert(a.end(), {"--tmpfs", p.string()});
  for (const auto& p : layout.read_only) a.insert(a.end(), {"--ro-bind", p.string(), p.string()});
  const std::string dir = layout.writable_dir.string();
  a.insert(a.end(), {"--bind", dir, dir, "--chdir", dir, "--"});
  return a;
}

}  // namespace mgk::runner
