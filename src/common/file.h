// Reading a whole file, with an error that names what the file was for.
#pragma once
#include <filesystem>
#include <string>

#include "common/error.h"

namespace mgk {

// The file's bytes. Throws "cannot read WHAT PATH" when it cannot be opened: a UsageError
// for code kUsage (files the user named), else an mgk::Error with `code` (mgk's own files).
std::string read_file(const std::filesystem::path& path, const std::string& what = "file",
                      ExitCode code = ExitCode::kInfrastructure);

}  // namespace mgk
