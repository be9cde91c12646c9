#include "sandboxing/isolation.h"

#include <unistd.h>

#include <system_error>

#include "process/run.h"
#include "sandboxing/namespaces.h"

namespace mgk::sandboxing {
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

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

// Runs `true` inside `sandbox` (a throwaway layout); empty when it worked, else why not.
std::string try_sandbox(const IsolationStatus& how) {
  try {
    SandboxLayout layout;
    layout.writable_dir = fs::temp_directory_path();
    Sandbox sandbox(how, layout);
    process::RunSpec trial;
    trial.argv = sandbox.command({"true"});
    trial.env = {{"PATH", "/usr/bin:/bin"}};
    trial.working_dir = "/";
    trial.timeout_s = 20;
    trial.hook = sandbox.hook();
    process::ProcessResult ran = process::run(trial);
    if (ran.ok()) return "";
    std::string why = first_line(ran.output);
    return why.empty() ? ran.status_line(trial.timeout_s) : why;
  } catch (const std::exception& e) {
    return std::string("could not be tried: ") + e.what();
  }
}
}  // namespace

const char* to_string(IsolationKind k) {
  switch (k) {
    case IsolationKind::kBubblewrap: return "bubblewrap";
    case IsolationKind::kNamespaces: return "namespaces";
    case IsolationKind::kNone: return "none";
  }
  return "?";
}

BubblewrapStatus probe_bubblewrap(const std::string& path_list) {
  BubblewrapStatus status;
  const std::string bwrap = process::find_program("bwrap", path_list).string();
  if (bwrap.empty()) {
    status.problem = "bubblewrap (bwrap) is not installed";
    return status;
  }
  status.program = bwrap;
  std::string why = try_sandbox({IsolationKind::kBubblewrap, bwrap, ""});
  if (!why.empty()) {
    status.problem = "bwrap cannot create a sandbox here (" + why + ")";
    return status;
  }
  status.usable = true;
  return status;
}

IsolationStatus probe_isolation(const std::string& path_list) {
  BubblewrapStatus bwrap = probe_bubblewrap(path_list);
  if (bwrap.usable) return {IsolationKind::kBubblewrap, bwrap.program, ""};
  std::string why = try_sandbox({IsolationKind::kNamespaces, "", ""});
  if (why.empty()) return {IsolationKind::kNamespaces, "", bwrap.problem};
  return {IsolationKind::kNone, "", bwrap.problem + ", and the kernel's namespaces cannot be entered (" + why + ")"};
}

const IsolationStatus& isolation_status() {
  static const IsolationStatus status = [] {
    process::EnvMap env = process::current_environment();
    return probe_isolation(env.count("PATH") ? env["PATH"] : "/usr/bin:/bin");
  }();
  return status;
}

std::string unisolated_warning(const std::string& problem) {
  return problem + ": sandboxed processes run WITHOUT isolation (they can reach the network, "
         "write outside their directory and see other processes); install bubblewrap, or run "
         "mgk as root or where user namespaces are allowed, to isolate them";
}

std::vector<std::string> bubblewrap_prefix(const std::string& bwrap, const SandboxLayout& layout) {
  std::vector<std::string> a = {bwrap, "--die-with-parent", "--new-session", "--unshare-net", "--unshare-pid",
                                "--unshare-ipc", "--unshare-uts"};
  // As root bwrap keeps every capability unless told otherwise; as a user it keeps none.
  if (layout.drop_capabilities && ::geteuid() == 0) a.insert(a.end(), {"--cap-drop", "ALL"});
  if (layout.minimal_root) {
    // The private mounts first: what is bound afterwards may lie under them (/tmp above all).
    a.insert(a.end(), {"--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"});
    for (const auto& d : layout.devices) a.insert(a.end(), {"--dev-bind", d.string(), d.string()});
    std::error_code ec;
    for (const auto& p : layout.read_only) {
      if (fs::is_symlink(p, ec)) a.insert(a.end(), {"--symlink", fs::read_symlink(p, ec).string(), p.string()});
      else a.insert(a.end(), {"--ro-bind", p.string(), p.string()});
    }
    for (const auto& m : layout.masked) a.insert(a.end(), {"--ro-bind", "/dev/null", m.string()});
    const std::string dir = layout.writable_dir.string();
    a.insert(a.end(), {"--bind", dir, dir, "--chdir", dir, "--"});
    return a;
  }
  a.insert(a.end(), {"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"});
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

Sandbox::Sandbox(const IsolationStatus& how, const SandboxLayout& layout) : kind_(how.kind) {
  if (kind_ == IsolationKind::kBubblewrap) {
    prefix_ = bubblewrap_prefix(how.bwrap, layout);
  } else if (kind_ == IsolationKind::kNamespaces) {
    NamespaceLayout ns;
    ns.writable_dir = layout.writable_dir.string();
    for (const auto& h : layout.hidden) ns.hidden.push_back(h.string());
    for (const auto& r : layout.read_only) ns.read_only.push_back(r.string());
    ns.drop_capabilities = layout.drop_capabilities;
    ns.minimal_root = layout.minimal_root;
    for (const auto& d : layout.devices) ns.devices.push_back(d.string());
    for (const auto& m : layout.masked) ns.masked.push_back(m.string());
    namespaces_ = std::make_unique<NamespaceSandbox>(std::move(ns));
  }
}

Sandbox::~Sandbox() = default;

std::vector<std::string> Sandbox::command(const std::vector<std::string>& argv) const {
  std::vector<std::string> a = prefix_;
  a.insert(a.end(), argv.begin(), argv.end());
  return a;
}

process::ChildHook Sandbox::hook() const { return namespaces_ ? namespaces_->hook() : process::ChildHook{}; }

}  // namespace mgk::sandboxing
