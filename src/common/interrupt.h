// Ctrl-C as a flag, not a sudden death: long loops (the launcher's wait, the agent's turns)
// poll it, unwind, kill their child processes and leave the store consistent.
#pragma once
#include <atomic>

namespace mgk {

// Installs SIGINT/SIGTERM handlers that set the flag (idempotent). A second Ctrl-C while
// the first is being handled restores the default action, so a stuck process still dies.
void install_interrupt_handler();
bool interrupted();
const std::atomic<bool>& interrupt_flag();  // for code that polls (the agent's runner)
void clear_interrupt();  // for tests

// Ctrl-C unwinding the stack. Deliberately neither an mgk::Error nor a std::exception (as
// boost::thread_interrupted is not): the many `catch (const Error&)` that turn a failure into
// a verdict, a warning or a retry must not turn Ctrl-C into one. Whoever has something to
// record on the way out (the agent, the tuner, bench's workers) catches it by name; the CLI
// turns it into exit 130.
struct Interrupted {
  const char* what() const noexcept { return "interrupted"; }
};

// Throws Interrupted when the flag is set.
void throw_if_interrupted();

}  // namespace mgk
