// The environment a sandboxed command gets: an allow-list of the parent's variables (what
// CUDA, NCCL and mgk itself need), never anything that looks like a credential, HOME set to
// the sandbox, and the NVLink-multicast switches forced off (the GPUs are shared).
#pragma once
#include <filesystem>
#include <map>
#include <string>

namespace mgk::runner {

using EnvMap = std::map<std::string, std::string>;

// True for names a secret hides behind: *_KEY, *_TOKEN, *_SECRET, *PASSWORD*, *CREDENTIAL*
// (case-insensitive). Such a variable never enters a sandbox.
bool looks_like_secret(const std::string& name);

// True for names passed through from the parent: PATH, LANG, LC_*, TERM, TZ,
// LD_LIBRARY_PATH, CUDA_*, NCCL_*, NVSHMEM_*, MGK_DB, MGK_HOME, MGK_ROOT (unless secret).
bool passes_through(const std::string& name);

// The parent's environment as a map (from `environ`).
EnvMap current_environment();

// The sandbox's environment: the allowed part of `parent`, then `extra` on top (which the
// caller chooses, e.g. PATH with the mgk binary's folder first, MGK_DB), then HOME=home,
// NCCL_NVLS_ENABLE=0 and NVSHMEM_DISABLE_NVLS=1. Throws mgk::Error if `extra` names a
// secret-looking variable: that is a bug in the caller, not something to drop quietly.
EnvMap scrubbed_environment(const EnvMap& parent, const EnvMap& extra,
                            const std::filesystem::path& home);

}  // namespace mgk::runner
