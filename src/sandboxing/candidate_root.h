// What the candidate process's sandbox holds (a minimal root, sandboxing/isolation.h): the
// system's libraries and programs read-only (/usr, /lib, ... and the loader's cache), the
// directories on LD_LIBRARY_PATH, the paths it is given (its built library's directory, the
// runner binary itself), the null devices, the driver's control nodes and the device nodes
// of the GPUs it may use. Nothing else of the host: not the project tree, not $HOME, not
// other users' files, not the store or the compile cache. The communication libraries it may
// not use (NCCL, NVSHMEM) lie there, so they are masked: opening them fails.
#pragma once
#include <filesystem>
#include <vector>

#include "process/spawn.h"
#include "sandboxing/isolation.h"

namespace mgk::sandboxing {

// `gpu_nodes`: the /dev/nvidiaN of its GPUs; empty when not known, and then every GPU's.
SandboxLayout candidate_layout(const std::filesystem::path& scratch, const process::EnvMap& env,
                               std::vector<std::filesystem::path> reads,
                               const std::vector<std::filesystem::path>& gpu_nodes);

}  // namespace mgk::sandboxing
