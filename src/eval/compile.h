// Compiling a kernel file into a shared object that implements the solution ABI, cached
// by content: the key hashes the source, every flag, the nvcc version and the headers it
// may include (sandbox/include, primitives/), so a cache hit is always the same binary.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "eval/evaluate.h"

namespace mgk::eval {

struct CompileResult {
  bool ok = false;
  bool cached = false;
  std::string key;         // content hash (the cache key, also the kernel hash)
  std::filesystem::path library;
  std::string log;         // nvcc's output
  double seconds = 0;
  std::string policy_violation;  // non-empty: refused before compiling
};

struct CompileRequest {
  std::filesystem::path source;
  std::filesystem::path problem_dir;   // on the include path (a problem's own headers)
  std::vector<std::string> defines;    // NAME=VALUE
  std::vector<std::string> extra_flags;
  std::string arch;                    // e.g. "sm_90a"; empty: sm_90a
  bool is_reference = false;           // references may use NCCL; candidates may not
};

CompileResult compile(const CompileRequest& request);

// For the tuner and the agent: compile the candidate `options` describe (into the cache).
CompileResult compile_candidate(const EvalOptions& options);

// Constructs a candidate may not use, found in its source with comments and strings
// removed; empty when none. (NCCL, dynamic loading, the oracle, NVLink multicast.)
std::string policy_violation(const std::string& source, bool is_reference);

// The source with comments blanked out, so prose ("faster than NCCL") is not code; string
// and char literals too unless `keep_strings` (inline PTX lives in strings). Line breaks
// are kept, so positions still name the same line.
std::string strip_comments(const std::string& source, bool keep_strings);

std::string nvcc_path();

}  // namespace mgk::eval
