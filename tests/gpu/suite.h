// What the suite-wide tests run on a problem: its plain candidate, and the degenerate outputs
// that must fail on every problem at every preset (suite.md: zeros, a constant, a copy of
// the input, and the reference's work without its communication). Paths only, no GPU.
#pragma once
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "support/test_paths.h"

namespace mgk::test {

// tests/gpu/candidates/<category>/<name>.cu; the collectives' plain candidates predate the
// categories and sit at tests/gpu/candidates/<name>.cu. Empty when there is none.
inline std::filesystem::path plain_candidate(const std::string& problem) {
  const auto dir = tests_dir() / "gpu/candidates";
  const std::string category = problem.substr(0, problem.find('/')), name = problem.substr(problem.find('/') + 1);
  const auto p = category == "collectives" ? dir / (name + ".cu") : dir / (problem + ".cu");
  return std::filesystem::exists(p) ? p : std::filesystem::path();
}

// The plain candidates of the compute problems build without their communication under
// -D MGK_LOCAL_ONLY=1 (tests/gpu/candidates/plain_compute.cuh); the collectives' do not
// (for them a rank's own data alone is copy_input).
inline bool has_local_only(const std::string& problem) {
  const auto p = plain_candidate(problem);
  return !p.empty() && p.parent_path().filename() != "candidates";
}

struct Degenerate {
  std::string name;
  std::filesystem::path file;
  std::vector<std::string> defines;  // NAME=VALUE
};

// Every degenerate of `problem`, in a fixed order.
inline std::vector<Degenerate> degenerates(const std::string& problem) {
  const auto dir = tests_dir() / "gpu/candidates/degenerate";
  std::vector<Degenerate> d = {{"zeros", dir / "zeros.cu", {}},
                               {"constant", dir / "constant.cu", {}},
                               {"copy_input", dir / "copy_input.cu", {}}};
  if (has_local_only(problem)) d.push_back({"local_only", plain_candidate(problem), {"MGK_LOCAL_ONLY=1"}});
  return d;
}

// tests/gpu/mutants/<category>/<name>/: the problem's mutants (tests/gpu/mutants/README.md),
// each its plain candidate with one plausible bug that must be judged incorrect under the
// problem's defaults. Every *.cu there, sorted; empty when the problem has no folder.
inline std::filesystem::path mutants_dir(const std::string& problem) { return tests_dir() / "gpu/mutants" / problem; }

inline std::vector<std::filesystem::path> mutants(const std::string& problem) {
  std::vector<std::filesystem::path> out;
  const auto dir = mutants_dir(problem);
  if (!std::filesystem::is_directory(dir)) return out;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ".cu") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace mgk::test
