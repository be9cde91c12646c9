#include "sandboxing/candidate_root.h"

#include <algorithm>
#include <fstream>
#include <regex>
#include <sstream>
#include <system_error>

namespace mgk::sandboxing {
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

// The entries of LD_LIBRARY_PATH, as written (empty ones left out).
std::vector<fs::path> ld_library_path(const process::EnvMap& env) {
  std::vector<fs::path> dirs;
  if (auto it = env.find("LD_LIBRARY_PATH"); it != env.end()) {
    std::stringstream ss(it->second);
    for (std::string p; std::getline(ss, p, ':');)
      if (!p.empty()) dirs.emplace_back(p);
  }
  return dirs;
}

// Whether `path` lies under the directory `dir` binds (a symlink is made again as a link,
// so nothing lies under it).
bool lies_inside(const fs::path& path, const fs::path& dir) {
  std::error_code ec;
  const auto rel = path.lexically_relative(dir);
  return !fs::is_symlink(dir, ec) && !rel.empty() && *rel.begin() != "..";
}

// The libraries a candidate may not use that a dlopen found in memory would load all the
// same: the communication libraries the task is to replace. Looked for where the loader
// looks (the usual directories, LD_LIBRARY_PATH, /etc/ld.so.conf.d) and where Python's
// NVIDIA wheels put them.
bool is_masked_library(const std::string& name) {
  return (name.rfind("libnccl", 0) == 0 || name.rfind("libnvshmem", 0) == 0) && name.find(".so") != std::string::npos;
}

std::vector<fs::path> library_dirs(const process::EnvMap& env) {
  std::vector<fs::path> dirs = {"/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib",
                                "/lib64", "/lib", "/usr/local/lib", "/usr/local/cuda/lib64", "/usr/local/cuda/lib",
                                "/usr/local/cuda/targets/x86_64-linux/lib"};
  for (auto& p : ld_library_path(env)) dirs.push_back(std::move(p));
  std::error_code ec;
  for (const auto& conf : fs::directory_iterator("/etc/ld.so.conf.d", ec)) {
    std::ifstream in(conf.path());
    for (std::string line; std::getline(in, line);)
      if (!line.empty() && line[0] == '/') dirs.emplace_back(line);
  }
  for (const char* site : {"/usr/local/lib", "/usr/lib"})
    for (const auto& py : fs::directory_iterator(site, ec))
      if (py.path().filename().string().rfind("python3", 0) == 0)
        for (const char* pkgs : {"dist-packages", "site-packages"})
          for (const char* lib : {"nvidia/nccl/lib", "nvidia/nvshmem/lib"}) dirs.push_back(py.path() / pkgs / lib);
  return dirs;
}

// The masked libraries' files (the targets of their symlinks) that lie in what the root shows.
std::vector<fs::path> masked_libraries(const process::EnvMap& env, const std::vector<fs::path>& shown) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& dir : library_dirs(env))
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      if (!is_masked_library(entry.path().filename().string())) continue;
      const fs::path file = fs::canonical(entry.path(), ec);
      if (ec || !fs::is_regular_file(file, ec)) continue;
      if (std::any_of(shown.begin(), shown.end(), [&](const fs::path& dir) { return lies_inside(file, dir); }))
        out.push_back(file);
    }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
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
  for (const auto& p : ld_library_path(env))
    if (p.is_absolute() && fs::is_directory(p, ec)) reads.push_back(fs::canonical(p, ec));
  for (auto& r : reads)
    if (fs::exists(r, ec)) layout.read_only.push_back(fs::canonical(r, ec));
  // Parents before what lies inside them, and nothing that a directory bound already holds.
  std::sort(layout.read_only.begin(), layout.read_only.end());
  std::vector<fs::path> kept;
  for (const auto& p : layout.read_only) {
    if (std::none_of(kept.begin(), kept.end(), [&](const fs::path& k) { return lies_inside(p, k); })) kept.push_back(p);
  }
  layout.read_only = std::move(kept);
  layout.masked = masked_libraries(env, layout.read_only);

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

}  // namespace mgk::sandboxing
