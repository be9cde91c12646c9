// The environment a child process gets: an allow-list of the parent's variables chosen by
// what the child is (a model's shell command, a trusted rank process, the candidate's rank
// process, the compiler), never anything that looks like a credential, HOME set to the
// child's own directory, and the NVLink-multicast switches forced off (the GPUs are shared).
#pragma once
#include <filesystem>
#include <string>

#include "process/spawn.h"

namespace mgk::sandboxing {

using process::EnvMap;

enum class EnvPolicy {
  // A model's shell command: what CUDA, NCCL and mgk itself (`mgk eval` inside) need.
  kShellCommand,
  // mgk-harness, the trusted rank process: CUDA and NCCL settings.
  kTrustedRank,
  // mgk-candidate, which runs the model's code: CUDA's settings and nothing else (no NCCL,
  // no mgk variables, nothing that could tell a check from a timed call).
  kCandidate,
  // nvcc: only what decides where the toolkit and the host compiler are. NVCC_* flags are
  // left out on purpose: they would change the build without changing its cache key.
  kCompiler,
};

// True for names a secret hides behind: *_KEY, *_TOKEN, *_SECRET, *PASSWORD*, *CREDENTIAL*
// (case-insensitive). Such a variable never enters a child.
bool looks_like_secret(const std::string& name);

// True for names passed through from the parent under `policy` (unless secret).
bool passes_through(const std::string& name, EnvPolicy policy = EnvPolicy::kShellCommand);

// The child's environment: the allowed part of `parent`, then `extra` on top (which the
// caller chooses, e.g. PATH with the mgk binary's folder first, MGK_DB), then HOME=home,
// NCCL_NVLS_ENABLE=0 and NVSHMEM_DISABLE_NVLS=1. Throws mgk::Error if `extra` names a
// secret-looking variable: that is a bug in the caller, not something to drop quietly.
EnvMap scrubbed_environment(const EnvMap& parent, const EnvMap& extra, const std::filesystem::path& home,
                            EnvPolicy policy = EnvPolicy::kShellCommand);

}  // namespace mgk::sandboxing
