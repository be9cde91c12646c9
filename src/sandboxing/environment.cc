#include "sandboxing/environment.h"

#include <algorithm>
#include <cctype>

#include "common/error.h"

namespace mgk::sandboxing {
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
bool any_of(const std::string& name, std::initializer_list<const char*> exact) {
  return std::any_of(exact.begin(), exact.end(), [&](const char* e) { return name == e; });
}
}  // namespace

bool looks_like_secret(const std::string& name) {
  const std::string n = upper(name);
  return ends_with(n, "_KEY") || ends_with(n, "_TOKEN") || ends_with(n, "_SECRET") ||
         n == "KEY" || n == "TOKEN" || n == "SECRET" ||
         n.find("PASSWORD") != std::string::npos || n.find("CREDENTIAL") != std::string::npos;
}

bool passes_through(const std::string& name, EnvPolicy policy) {
  if (looks_like_secret(name)) return false;
  const bool locale = any_of(name, {"LANG", "TZ"}) || starts_with(name, "LC_");
  const bool cuda = name == "LD_LIBRARY_PATH" || starts_with(name, "CUDA_");
  const bool nccl = starts_with(name, "NCCL_") || starts_with(name, "NVSHMEM_");
  switch (policy) {
    case EnvPolicy::kShellCommand:
      return locale || cuda || nccl || any_of(name, {"PATH", "TERM", "MGK_DB", "MGK_HOME", "MGK_ROOT"});
    case EnvPolicy::kTrustedRank:
      return locale || cuda || nccl || any_of(name, {"PATH", "TMPDIR"}) || starts_with(name, "NVIDIA_");
    case EnvPolicy::kCandidate:
      return locale || cuda || starts_with(name, "NVIDIA_");
    case EnvPolicy::kCompiler:
      return locale || cuda || any_of(name, {"PATH", "TMPDIR"});
  }
  return false;
}

EnvMap scrubbed_environment(const EnvMap& parent, const EnvMap& extra, const std::filesystem::path& home,
                            EnvPolicy policy) {
  EnvMap env;
  for (const auto& [name, value] : parent)
    if (passes_through(name, policy)) env[name] = value;
  for (const auto& [name, value] : extra) {
    if (looks_like_secret(name))
      throw Error("refusing to pass '" + name + "' into a child process: it looks like a credential");
    env[name] = value;
  }
  if (env.find("PATH") == env.end()) env["PATH"] = "/usr/local/bin:/usr/bin:/bin";
  env["HOME"] = home.string();
  // NVLink multicast stays off on the shared machines (design.md, hard rules).
  env["NCCL_NVLS_ENABLE"] = "0";
  env["NVSHMEM_DISABLE_NVLS"] = "1";
  return env;
}

}  // namespace mgk::sandboxing
