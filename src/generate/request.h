// What `mgk generate` was asked, as values; the command line fills it (cli/cmd_generate.cc),
// generate/run.h carries it out.
#pragma once
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "agent/session_setup.h"

namespace mgk::generate {

// The session's limits, sampling and command timeout are bound straight into `session`,
// so their defaults are the agent's (agent/config.h); turns 0: the mode's default, or the
// stored attempt's.
struct Request {
  std::string problem, model, mode = "refine", reasoning_effort;
  std::vector<int> gpus;  // --gpus, parsed
  int turns = 0, world = 2;
  double temperature = 0;
  agent::SessionChoices session;
  bool temperature_given = false, tune = false, world_given = false, compile_only = false, dry_run = false,
       json = false;
  int64_t resume = 0;
  std::set<std::string> given;  // the session flags typed (a resume keeps the stored ones for the others)
};

}  // namespace mgk::generate
