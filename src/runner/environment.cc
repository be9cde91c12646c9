#include "runner/environment.h"

#include <algorithm>
#include <cctype>

#include "common/error.h"

extern char** environ;

namespace mgk::runner {
namespace {
std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::toupper(c); });
  return s;
}
bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
bool starts_with(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}
}  // namespace

bool looks_like_secret(const std::string& name) {
  const std::string n = upper(name);
  return ends_with(n, "_KEY") || ends_with(n, "_TOKEN") || ends_with(n, "_SECRET") ||
         n == "KEY" || n == "TOKEN" || n == "SECRET" ||
         n.find("PASSWORD") != std::string::npos || n.find("CREDENTIAL") != std::string::npos;
}

bool passes_through(const std::string& name) {
  if (looks_like_secret(name)) return false;
  static const char* const exact[] = {"PATH", "LANG", "TERM", "TZ", "LD_LIBRARY_PATH",
                                      "MGK_DB", "MGK_HOME", "MGK_ROOT"};
  for (const char* e : exact)
    if (name == e) return true;
  return starts_with(name, "LC_") || starts_with(name, "CUDA_") || starts_with(name, "NCCL_") ||
         starts_with(name, "NVSHMEM_");
}

EnvMap current_environment() {
  EnvMap env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string entry(*e);
    auto eq = entry.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    env.emplace(entry.substr(0, eq), entry.substr(eq + 1));
  }
  return env;
}

EnvMap scrubbed_environment(const EnvMap& parent, const EnvMap& extra,
                            const std::filesystem::path& home) {
  EnvMap env;
  for (const auto& [name, value] : parent)
    if (passes_through(name)) env[name] = value;
  for (const auto& [name, value] : extra) {
    if (looks_like_secret(name))
      throw Error("refusing to pass '" + name + "' into a sandbox: it looks like a credential");
    env[name] = value;
  }
  if (env.find("PATH") == env.end()) env["PATH"] = "/usr/local/bin:/usr/bin:/bin";
  env["HOME"] = home.string();
  // NVLink multicast stays off on the shared machines (design.md, hard rules).
  env["NCCL_NVLS_ENABLE"] = "0";
  env["NVSHMEM_DISABLE_NVLS"] = "1";
  return env;
}

}  // namespace mgk::runner
