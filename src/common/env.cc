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

namespace {

// $<xdg_variable>, else $HOME/<fallback>, as the XDG base directory spec has it; empty
// when neither is set.
std::filesystem::path xdg_dir(const char* xdg_variable, const char* fallback) {
  if (auto x = env(xdg_variable); x && std::filesystem::path(*x).is_absolute()) return *x;
  if (auto home = env("HOME")) return std::filesystem::path(*home) / fallback;
  return {};
}

}  // namespace

std::filesystem::path home_dir() {
  if (auto h = env("MGK_HOME")) return *h;
  std::filesystem::path cache = xdg_dir("XDG_CACHE_HOME", ".cache");
  return cache.empty() ? std::filesystem::current_path() / ".mgk" : cache / "mgk";
}

bool database_path_is_default(const std::optional<std::string>& explicit_path) {
  return !(explicit_path && !explicit_path->empty()) && !env("MGK_DB");
}

std::filesystem::path database_path(const std::optional<std::string>& explicit_path) {
  if (explicit_path && !explicit_path->empty()) return *explicit_path;
  if (auto d = env("MGK_DB")) return *d;
  std::filesystem::path data = xdg_dir("XDG_DATA_HOME", ".local/share");
  return data.empty() ? std::filesystem::current_path() / "mgk.db" : data / "mgk" / "mgk.db";
}

std::filesystem::path self_dir() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::current_path() : p.parent_path();
}

}  // namespace mgk
