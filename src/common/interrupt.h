// Ctrl-C as a flag, not a sudden death: long loops (the launcher's wait, the agent's turns)
// poll it, unwind, kill their child processes and leave the store consistent.
#pragma once
#include <atomic>

#include "common/error.h"

namespace mgk {

// Installs SIGINT/SIGTERM handlers that set the flag (idempotent). A second Ctrl-C while
// the first is being handled restores the default action, so a stuck process still dies.
void install_interrupt_handler();
bool interrupted();
const std::atomic<bool>& interrupt_flag();  // for code that polls (the agent's runner)
void clear_interrupt();  // for tests

struct Interrupted : Error {
  Interrupted() : Error("interrupted", ExitCode::kInterrupted) {}
};

// Throws Interrupted when the flag is set.
void throw_if_interrupted();

}  // namespace mgk
