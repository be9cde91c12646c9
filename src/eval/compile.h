// Compiling a kernel file into a shared object that implements the solution ABI, cached
// by content (eval/compile_cache.h). The file is read once: those bytes are hashed, staged, preprocessed, judged,
// compiled and handed back for the store, so an edit made meanwhile cannot get another
// file's verdict. A candidate is judged three times: its preprocessed source (what a macro
// pastes together is seen), the PTX nvcc made of it (device code the host pass hides), and
// the built library's imports and host instructions (what it really links and calls).
#pragma once
#include <filesystem>
#include <string>
#include <vector>


namespace mgk::eval {

struct CompileResult {
  bool ok = false;
  bool cached = false;
  std::string source;         // the bytes that were compiled
  std::string kernel_hash;  // their SHA-256: the kernel's identity in the store
  std::string build_key;      // the compile cache key: the preprocessed source, flags, nvcc
  std::filesystem::path library;
  std::string log;            // nvcc's output
  double seconds = 0;
  std::string refusal;        // non-empty: refused (the rule broken, with file:line or symbol)
  std::string refused_rule;   // its class (eval/candidate_rules.h id); empty for other refusals
  std::string unreadable;     // non-empty: the file is not a kernel source (not UTF-8, empty)
  // Where the time went (seconds): finding it in the cache (all of it, on a hit found from
  // the bytes alone), nvcc -E (beside the build, so not added to it), nvcc, the checks.
  struct Phases {
    double lookup = 0, preprocess = 0, nvcc = 0, ptx_check = 0, library_checks = 0;
  } phases;
};

struct CompileRequest {
  std::filesystem::path source;
  std::filesystem::path problem_dir;   // on the include path (a problem's own headers)
  std::vector<std::string> defines;    // NAME=VALUE
  std::vector<std::string> extra_flags;
  std::string arch;                    // e.g. "sm_90a"; empty: sm_90a
  bool is_reference = false;           // references may use NCCL; candidates may not
  // How nvcc's messages and the refusals name the kernel; empty: `source` as given. The
  // agent gives a name without folders: no host path reaches the model.
  std::string shown_as;
  // The source and PTX checks only: nvcc stops at PTX (no host compile, ptxas or link), so
  // no library is built, the library's checks (imports, host code) do not run and nothing is
  // cached. For judging many near-copies of files built in full elsewhere (the mutants of a
  // plain candidate), at half a build's time.
  bool checks_only = false;
};

// Throws UsageError when the file is missing or a directory, Interrupted on Ctrl-C (nvcc
// and its temporary files are gone by then), mgk::Error when nvcc cannot be run.
CompileResult compile(const CompileRequest& request);

// What every kernel is built with (the prompt shows it): nvcc's flags for `arch` (empty:
// sm_90a) without the include paths, and the libraries linked.
std::vector<std::string> nvcc_flags(const std::string& arch);
std::vector<std::string> linked_libraries(bool is_reference);

// mgk's own header folders a build sees, in the order nvcc searches them: the solution ABI
// and its helpers (src/abi: every kernel), the reference kit (sandbox/reference: references
// only; a candidate cannot include it) and the primitives.
std::vector<std::filesystem::path> mgk_header_dirs(bool is_reference);
// Where a build's `#include "..."` is looked for after the including file's own folder:
// mgk_header_dirs, then the kernel's folder, then the problem's.
std::vector<std::filesystem::path> include_dirs(const CompileRequest& request);


// The kernel file's text, checked: UsageError for a missing file or a directory; the
// second member is non-empty (why) for bytes that are not a kernel source.
std::pair<std::string, std::string> read_kernel_source(const std::filesystem::path& path);

// The source with comments blanked out, so prose ("faster than NCCL") is not code; string
// and char literals too unless `keep_strings` (inline PTX lives in strings). Line breaks
// are kept, so positions still name the same line.
std::string strip_comments(const std::string& source, bool keep_strings);

std::string nvcc_path();
// `nvcc --version`'s output, asked once per process; empty when nvcc cannot start.
std::string nvcc_version();

// The nvcc command a build of `request` runs, compiling the file where it is into `output`,
// without what mgk adds (staging, nvcc -E, --keep, the checks): for timing mgk against a
// bare nvcc (bench/compile).
std::vector<std::string> nvcc_command(const CompileRequest& request, const std::filesystem::path& output);

}  // namespace mgk::eval
