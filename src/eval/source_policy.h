// What a kernel's source may not contain, judged on the preprocessed text (what the
// compiler sees, so a macro that pastes a name together is judged by the name it makes),
// line by line as the preprocessor's line markers attribute it. Lines from the trusted
// headers (the CUDA toolkit, the system, mgk's src/abi, the reference kit (references only) and primitives/) are not
// judged: they declare what the candidate may not call. Everything else is, the
// candidate's own headers included.
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "eval/candidate_rules.h"

namespace mgk::eval {

struct PolicyViolation {
  std::string file;  // as the preprocessor names it
  int line = 0;
  std::string found;  // the construct, e.g. "ncclAllReduce"
  std::string why;
  Rule rule = Rule::kNccl;
  std::string describe() const;  // "kernel.cu:12: 'ncclAllReduce': candidates may not call NCCL ..."
};

// The first violation in `preprocessed` (nvcc -E output); lines of files under any of
// `trusted_dirs` are skipped. References may use NCCL; the hard rules (no NVLink multicast,
// no device reset) hold for them too.
std::optional<PolicyViolation> check_preprocessed(const std::string& preprocessed,
                                                  const std::vector<std::filesystem::path>& trusted_dirs,
                                                  bool is_reference);

// The first mention of NVLink multicast in generated PTX (device code the preprocessed host
// pass does not show: an `#ifdef __CUDA_ARCH__` branch, a pasted mnemonic).
std::optional<PolicyViolation> check_ptx(const std::string& ptx, const std::string& file);

// Text with comments blanked out (and string and character literals too unless
// `keep_strings`: inline PTX lives in strings); newlines kept, so line numbers hold.
std::string strip_comments(const std::string& s, bool keep_strings);

}  // namespace mgk::eval
