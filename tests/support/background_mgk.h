// `mgk` started in the background, for tests that act on it while it runs (Ctrl-C in a
// chosen phase) and then check what it left behind.
#pragma once
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "process/spawn.h"

namespace mgk::test {

// `mgk ARGS` with `env` over the test's environment; stdout and stderr go to `output`.
process::Child spawn_mgk(const std::vector<std::string>& args, const std::map<std::string, std::string>& env,
                         const std::filesystem::path& output);

// Polls `ready` until it holds (true), or `c` ends or `limit` passes (false).
bool wait_until(process::Child& c, const std::function<bool()>& ready,
                std::chrono::seconds limit = std::chrono::minutes(2));

// How many running processes have a command line starting with a path ending in `name`.
int processes_named(const std::string& name);

}  // namespace mgk::test
