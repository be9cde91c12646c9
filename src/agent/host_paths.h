// No host paths in what the model reads: the compiler, the checks and the ranks name files
// by where they are on this machine (the sandbox, the compile cache, mgk's tree, $HOME);
// the model is told the same names on every machine, relative to the folders they are
// found from (`mgk/solution.h`, `kernel.cu`), so prompts neither differ by machine nor
// leak its layout.
#pragma once
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "results/eval_result.h"

namespace mgk::agent {

class HostPaths {
 public:
  // `folders` is what to take out (each with what stands for it), in any order.
  explicit HostPaths(std::vector<std::pair<std::filesystem::path, std::string>> folders);
  // This machine's: the sandbox (names in it are the kernel's neighbours), mgk's home (the
  // compile cache), mgk's include folders and tree, and $HOME (as `~`).
  static HostPaths of_this_machine(const std::filesystem::path& sandbox);

  // `text` with every one of the folders taken out of the paths it writes.
  std::string relative(std::string text) const;
  // The result as the model reads it: the compile log, the message, the failures.
  results::EvalResult relative(results::EvalResult result) const;

 private:
  std::vector<std::pair<std::string, std::string>> folders_;  // longest first: the deepest folder wins
};

}  // namespace mgk::agent
