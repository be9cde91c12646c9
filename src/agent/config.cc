#include "agent/config.h"

#include "common/error.h"

namespace mgk::agent {

const char* to_string(Mode m) { return m == Mode::kRefine ? "refine" : "shell"; }

Mode mode_from_string(const std::string& s) {
  if (s == "refine") return Mode::kRefine;
  if (s == "shell") return Mode::kShell;
  throw UsageError("unknown mode '" + s + "' (valid: refine, shell)");
}

const char* to_string(Action a) {
  switch (a) {
    case Action::kKernel: return "kernel";
    case Action::kShell: return "shell";
    case Action::kSubmit: return "submit";
    case Action::kFormatError: return "format_error";
    case Action::kTruncated: return "truncated";
  }
  return "unknown";
}

const char* to_string(ExitReason r) {
  switch (r) {
    case ExitReason::kSubmitted: return "submitted";
    case ExitReason::kTurnsExhausted: return "turns_exhausted";
    case ExitReason::kCostLimit: return "cost_limit";
    case ExitReason::kTimeLimit: return "time_limit";
    case ExitReason::kFormatErrors: return "format_errors";
    case ExitReason::kInterrupted: return "interrupted";
    case ExitReason::kApiError: return "api_error";
    case ExitReason::kInfrastructure: return "infrastructure";
  }
  return "unknown";
}

store::Status status_of(ExitReason r) {
  if (r == ExitReason::kInterrupted) return store::Status::kInterrupted;
  if (r == ExitReason::kApiError || r == ExitReason::kInfrastructure) return store::Status::kFailed;
  return store::Status::kDone;
}

int default_turns(Mode m) { return m == Mode::kShell ? kShellSteps : kRefineTurns; }

}  // namespace mgk::agent
