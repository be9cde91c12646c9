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

// Per-user scratch that can be rebuilt (compile cache, sandboxes): $MGK_HOME, else
// $XDG_CACHE_HOME/mgk, else ~/.cache/mgk (./.mgk only where there is no $HOME). Not the
// working directory: the compile cache must not go cold after a `cd`.
std::filesystem::path home_dir();

// Directory of the running executable (/proc/self/exe), to find mgk-harness beside mgk.
std::filesystem::path self_dir();

// The SQLite store: explicit path if given, else $MGK_DB, else $XDG_DATA_HOME/mgk/mgk.db,
// else ~/.local/share/mgk/mgk.db (./mgk.db only where there is no $HOME), so that history
// does not split by directory.
std::filesystem::path database_path(const std::optional<std::string>& explicit_path = {});

// True when database_path() came from neither an explicit path nor $MGK_DB: its folder is
// mgk's to create.
bool database_path_is_default(const std::optional<std::string>& explicit_path = {});

}  // namespace mgk
