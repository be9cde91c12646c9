// What `generate --dry-run` and `bench --dry-run` print: the attempts that would run, the GPU
// groups their evaluations would take, the exact first prompt of one attempt (system, then
// user) and an estimate of the tokens. Nothing is sent to a model and nothing is evaluated.
#pragma once
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "agent/problem_prompt.h"
#include "llm/config.h"

namespace mgk::bench_run {

struct DryRun {
  std::string model, mode;
  int turns = 0, samples = 1, max_tokens = 0;
  std::vector<std::pair<std::string, int>> problems;  // name, ranks
  std::vector<std::string> groups;                    // one line per world size
  std::string example;                                // "collectives/all_reduce sample 0"
  agent::InitialPrompt prompt;                        // the example's first prompt
  long long first_prompts_chars = 0;                  // every attempt's first prompt, summed
  const llm::Config* llm = nullptr;                   // for the model's list price, if known
};

void print_dry_run(std::ostream& out, const DryRun& d);

// "2 ranks: [0,1] [2,3]  (2 evaluations at a time)" or the ranks-share and no-GPU forms.
std::string group_line(int world, const std::vector<std::vector<int>>& groups, bool compile_only);

}  // namespace mgk::bench_run
