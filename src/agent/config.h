// What an agent session is asked to do and within which limits, and why it ended.
#pragma once
#include <optional>
#include <string>

namespace mgk::agent {

enum class Mode {
  kRefine,  // each reply is a whole kernel file; the tool judges it and answers
  kShell,   // each reply is one shell command run in the sandbox; the model submits
};
const char* to_string(Mode m);
Mode mode_from_string(const std::string& s);  // UsageError listing the valid names

// Why a session ended; stored as the attempt's exit reason.
enum class ExitReason {
  kSubmitted,       // shell mode: the model submitted
  kTurnsExhausted,  // the turn (refine) or step (shell) limit
  kCostLimit,
  kTimeLimit,
  kFormatErrors,    // too many unusable replies in a row
  kInterrupted,     // Ctrl-C
  kApiError,        // the provider gave up
  kInfrastructure,  // the evaluator could not judge a kernel (says nothing of the kernel)
};
const char* to_string(ExitReason r);

struct Limits {
  int turns = 8;                // model calls (steps in shell mode), resumed ones included
  double max_cost_usd = 3.0;    // stop before a call once the cost reached this; <= 0: none
  double max_seconds = 0;       // wall time of this session; <= 0: none
  int max_format_errors = 3;    // consecutive unusable replies that end the session
};

// Parameters of every model request.
struct Sampling {
  int max_tokens = 16384;
  std::optional<double> temperature;
  std::optional<std::string> reasoning_effort;
};

}  // namespace mgk::agent
