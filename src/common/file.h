// Reading and writing a whole file, with an error that names the file.
#pragma once
#include <filesystem>
#include <string>

#include "common/error.h"

namespace mgk {

// The file's bytes. Throws "cannot read WHAT PATH" when it cannot be opened: a UsageError
// for code kUsage (files the user named), else an mgk::Error with `code` (mgk's own files).
std::string read_file(const std::filesystem::path& path, const std::string& what = "file",
                      ExitCode code = ExitCode::kInfrastructure);

// Writes `text` as the whole file (its folder must exist). Throws mgk::Error "cannot write PATH".
void write_file(const std::filesystem::path& path, const std::string& text);

// The same through a temporary file and a rename, so that a reader never sees half a file
// (a kernel the tuner bakes, a Slurm run's script). Throws mgk::Error naming the path.
void write_file_atomically(const std::filesystem::path& path, const std::string& text);

}  // namespace mgk
