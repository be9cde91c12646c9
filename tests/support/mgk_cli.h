// Runs the built `mgk` binary as a user would, for end-to-end tests.
#pragma once
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace mgk::test {

struct CliResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr
  double seconds = 0;
  // The first {...} JSON document in the output (for --json runs); null when none.
  nlohmann::json json() const;
};

CliResult run_mgk(const std::vector<std::string>& args, const std::map<std::string, std::string>& env = {},
                  int timeout_s = 600);

// Expects an `mgk eval --json` run to end in `verdict`, with `reason_part` (when given)
// somewhere in its JSON.
void expect_verdict(const CliResult& r, const std::string& verdict, const std::string& reason_part = "");

// True when a GPU is visible to mgk-harness (CI has none); `count` gets how many.
bool gpus_available(int* count = nullptr);

}  // namespace mgk::test
