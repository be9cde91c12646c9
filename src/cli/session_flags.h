// The flags a model session is limited and sampled by, added here for both `generate` and
// `bench`, so that both refuse the same values with the same line before anything runs
// ("--max-tokens: must be a number of at least 1, not '0'").
#pragma once
#include <string>

#include "cli/app.h"

namespace mgk::cli {

// The reasoning efforts providers take (Anthropic maps them to a thinking budget).
inline const std::vector<std::string> kReasoningEfforts = {"minimal", "low", "medium", "high"};

// A cost limit in USD: a finite number of at least 0 (0: no limit), shown with its default.
CLI::Option* add_cost_option(CLI::App* c, const std::string& flag, double* usd, const std::string& help);

// Where the sampling flags land; `temperature_given` records that --temperature was typed
// (the provider's default stands otherwise).
struct SamplingFlags {
  int* max_tokens = nullptr;
  double* temperature = nullptr;
  bool* temperature_given = nullptr;
  std::string* reasoning_effort = nullptr;
  double* command_timeout_s = nullptr;
};
// --max-tokens (at least 1), --temperature (at least 0), --reasoning-effort (one of
// kReasoningEfforts), --command-timeout (above 0).
void add_sampling_options(CLI::App* c, const SamplingFlags& f);

}  // namespace mgk::cli
