// Environment and filesystem locations used across mgk, read in one place.
#pragma once
#include <filesystem>
#include <optional>
#include <string>

namespace mgk {

// getenv as an optional; empty strings count as unset.
std::optional<std::string> env(const char* name);

// The mgk source/installation root holding problems/, prompts/, primitives/, sandbox/.
// $MGK_ROOT overrides the compiled-in source root.
std::filesystem::path root_dir();

// Per-user state (compile cache, sandboxes): $MGK_HOME, else ./.mgk in the working dir.
std::filesystem::path home_dir();

// Directory of the running executable (/proc/self/exe), to find mgk-harness beside mgk.
std::filesystem::path self_dir();

// The SQLite store: explicit path if given, else $MGK_DB, else ./mgk.db.
std::filesystem::path database_path(const std::optional<std::string>& explicit_path = {});

}  // namespace mgk
