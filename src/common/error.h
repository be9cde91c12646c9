// One error discipline for all of mgk: exceptions of type mgk::Error carrying a message and
// a chain of context lines added on the way up ("while compiling kernel.cu", ...). The CLI
// prints the message and, with --verbose, the context chain. Exit codes come from ExitCode.
#pragma once
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace mgk {

// Process exit codes, the same for every subcommand (the README's table lists them).
enum class ExitCode : int {
  kOk = 0,              // success; for eval: correct; for generate: a correct kernel found
  kIncorrect = 1,       // evaluated and wrong (or did not compile); no correct kernel
  kTimeout = 2,         // a hang killed by the watchdog
  kInfrastructure = 3,  // mgk itself, the machine, the environment or the model API failed
  kLimit = 4,           // a cost, time or turn limit ended a session without a correct kernel
  kNotFound = 5,        // what was asked to be read is not there (attempt, run, calibration, store)
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

// Something asked for by id or by path is not there: exits with kNotFound.
class NotFoundError : public Error {
 public:
  explicit NotFoundError(std::string message) : Error(std::move(message), ExitCode::kNotFound) {}
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
