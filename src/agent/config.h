// What an agent session is asked to do and within which limits, what each turn did, and why
// it ended. The defaults of a session are written here and nowhere else: `mgk generate`,
// `mgk bench` and a stored bench's arguments take them from these structs.
#pragma once
#include <optional>
#include <string>

#include "llm/provider.h"
#include "store/records.h"

namespace mgk::agent {

enum class Mode {
  kRefine,  // each reply is a whole kernel file; the tool judges it and answers
  kShell,   // each reply is one shell command run in the sandbox; the model submits
};
const char* to_string(Mode m);
Mode mode_from_string(const std::string& s);  // UsageError listing the valid names

// What one turn did with the model's reply; stored as the turn's action.
enum class Action {
  kKernel,       // refine mode: a kernel file, judged
  kShell,        // shell mode: a command, run
  kSubmit,       // shell mode: the submission sentinel
  kFormatError,  // a reply the parser refused
  kTruncated,    // a reply cut at max tokens
};
const char* to_string(Action a);  // kernel, shell, submit, format_error, truncated

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

// The stored status of an attempt (and of a `generate` run) that ended for `r`:
// interrupted (resumable), failed (the provider or the evaluator gave up), else done.
store::Status status_of(ExitReason r);

// The turns of a session in `m` when none are asked for: a shell session needs many more
// steps than a refine session needs turns.
inline constexpr int kRefineTurns = 8;
inline constexpr int kShellSteps = 40;
int default_turns(Mode m);

struct Limits {
  int turns = kRefineTurns;      // model calls (steps in shell mode), resumed ones included
  double max_cost_usd = 3.0;     // stop before a call once the cost reached this; <= 0: none
  double max_seconds = 0;        // wall time of this session; <= 0: none
  int max_format_errors = 3;     // consecutive unusable replies that end the session
};

// Parameters of every model request.
struct Sampling {
  int max_tokens = llm::kDefaultMaxTokens;
  std::optional<double> temperature;
  std::optional<std::string> reasoning_effort;
};

// Shell mode: seconds one command may run.
inline constexpr double kCommandTimeoutS = 600;

}  // namespace mgk::agent
