#include "common/env.h"

#include <cstdlib>

namespace mgk {

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}

std::filesystem::path root_dir() {
  if (auto r = env("MGK_ROOT")) return *r;
  return MGK_SOURCE_ROOT;
}

std::filesystem::path home_dir() {
  if (auto h = env("MGK_HOME")) return *h;
  return std::filesystem::current_path() / ".mgk";
}

std::filesystem::path database_path(const std::optional<std::string>& explicit_path) {
  if (explicit_path && !explicit_path->empty()) return *explicit_path;
  if (auto d = env("MGK_DB")) return *d;
  return std::filesystem::current_path() / "mgk.db";
}

std::filesystem::path self_dir() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::current_path() : p.parent_path();
}

}  // namespace mgk
