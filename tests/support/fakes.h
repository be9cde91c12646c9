// The stand-in rank processes of tests/fakes/, under the names that choose their scenario.
#pragma once
#include <filesystem>
#include <string>

namespace mgk::test {

// The fake program `program` (scripted-harness, scripted-candidate, sandbox-probe,
// filter-probe) under the name `name` in `dir` (a hard link, else a copy); returns its path. The fakes read their scenario
// from their own name: scripted-harness-hang, sandbox-probe-40123, ...
std::filesystem::path fake(const std::string& program, const std::filesystem::path& dir, const std::string& name);

}  // namespace mgk::test
