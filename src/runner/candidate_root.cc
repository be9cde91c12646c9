#include "runner/candidate_root.h"

#include <algorithm>
#include <regex>
#include <sstream>
#include <system_error>

namespace mgk::runner {
namespace fs = std::filesystem;

namespace {

// The system's read-only parts a dynamically linked CUDA program needs to start, and the
// driver's description of the hardware (/sys: the PCI topology the driver reads). /etc
// holds little it needs and much that is the host's: only the loader's cache, and the
// alternatives' symlinks, which /usr/local/cuda is on Ubuntu.
const char* const kSystemPaths[] = {"/usr", "/lib", "/lib64", "/lib32", "/libx32", "/bin", "/sbin", "/sys",
                                    "/etc/ld.so.cache", "/etc/alternatives"};

// The driver's device nodes that are not one GPU's: control, unified memory, modesetting.
bool is_control_node(const std::string& name) {
  static const std::regex gpu(R"(nvidia\d+)");
  return name.rfind("nvidia", 0) == 0 && !std::regex_match(name, gpu) && name != "nvidia-caps";
}

}  // namespace

SandboxLayout candidate_layout(const fs::path& scratch, const process::EnvMap& env, std::vector<fs::path> reads,
                               const std::vector<fs::path>& gpu_nodes) {
  SandboxLayout layout;
  layout.writable_dir = scratch;
  layout.minimal_root = true;
  std::error_code ec;
  for (const char* p : kSystemPaths)
    if (fs::exists(fs::symlink_status(p, ec))) layout.read_only.emplace_back(p);
  if (auto it = env.find("LD_LIBRARY_PATH"); it != env.end()) {
    std::stringstream ss(it->second);
    for (std::string p; std::getline(ss, p, ':');)
      if (!p.empty() && fs::path(p).is_absolute() && fs::is_directory(p, ec)) reads.push_back(fs::canonical(p, ec));
  }
  for (auto& r : reads)
    if (fs::exists(r, ec)) layout.read_only.push_back(fs::canonical(r, ec));
  // Parents before what lies inside them, and nothing that a directory bound already holds.
  std::sort(layout.read_only.begin(), layout.read_only.end());
  std::vector<fs::path> kept;
  for (const auto& p : layout.read_only) {
    const bool inside = std::any_of(kept.begin(), kept.end(), [&](const fs::path& k) {
      const auto rel = p.lexically_relative(k);
      return !fs::is_symlink(k, ec) && !rel.empty() && *rel.begin() != "..";
    });
    if (!inside) kept.push_back(p);
  }
  layout.read_only = std::move(kept);

  for (const char* d : {"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"})
    if (fs::exists(d, ec)) layout.devices.emplace_back(d);
  for (const auto& entry : fs::directory_iterator("/dev", ec)) {
    const std::string name = entry.path().filename().string();
    const bool gpu = std::regex_match(name, std::regex(R"(nvidia\d+)"));
    if (is_control_node(name) || (gpu && gpu_nodes.empty())) layout.devices.push_back(entry.path());
  }
  for (const auto& n : gpu_nodes)
    if (fs::exists(n, ec)) layout.devices.push_back(n);
  std::sort(layout.devices.begin(), layout.devices.end());
  layout.devices.erase(std::unique(layout.devices.begin(), layout.devices.end()), layout.devices.end());
  return layout;
}

}  // namespace mgk::runner
