// One error discipline for all of mgk: exceptions of type mgk::Error carrying a message and
// a chain of context lines added on the way up ("while compiling kernel.cu", ...). The CLI
// prints the message and, with --verbose, the context chain. Exit codes come from ExitCode.
#pragma once
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace mgk {

// Process exit codes, the same for every subcommand.
enum class ExitCode : int {
  kOk = 0,              // success; for eval: correct
  kIncorrect = 1,       // evaluated and wrong (or did not compile)
  kTimeout = 2,         // a hang killed by the watchdog, or a budget/time limit hit
  kInfrastructure = 3,  // mgk itself, the machine, or the environment failed
  kUsage = 64,          // bad command line or bad input file (EX_USAGE)
  kInterrupted = 130,   // Ctrl-C
};

class Error : public std::runtime_error {
 public:
  explicit Error(std::string message, ExitCode code = ExitCode::kInfrastructure)
      : std::runtime_error(std::move(message)), code_(code) {}

  ExitCode code() const { return code_; }
  const std::vector<std::string>& context() const { return context_; }

  // Adds an outer context line ("while X") and returns *this for rethrow.
  Error& with_context(std::string line) {
    context_.push_back(std::move(line));
    return *this;
  }

 private:
  ExitCode code_;
  std::vector<std::string> context_;
};

// Bad user input (command line, spec file, config): exits with kUsage.
class UsageError : public Error {
 public:
  explicit UsageError(std::string message) : Error(std::move(message), ExitCode::kUsage) {}
};

// Runs f(); an mgk::Error escaping it gets `line` appended to its context.
template <typename F>
decltype(auto) with_context(const std::string& line, F&& f) {
  try {
    return f();
  } catch (Error& e) {
    e.with_context(line);
    throw;
  }
}

}  // namespace mgk
