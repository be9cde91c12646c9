// What the tuner minimises, behind a small interface: the evaluator in production
// (eval_objective.h), synthetic cost functions in tests. And the clock the time budget reads.
#pragma once
#include <string>

#include "tune/space.h"
#include "tune/trial.h"

namespace mgk::tune {

// The outcome of measuring one configuration.
struct Measurement {
  TrialStatus status = TrialStatus::kError;
  double time_us = 0;         // ok only
  std::string message;        // one line: why it failed
  double compile_seconds = 0;
  double eval_seconds = 0;
};

class Objective {
 public:
  virtual ~Objective() = default;

  // Work that can be done ahead of measure() for the same configuration, on another thread
  // (compiling it). The tuner calls prepare() for configuration k+1 while measure() runs for
  // k; prepare() never runs concurrently with itself, nor measure() with itself. Anything it
  // fails at, measure() must find out again and report.
  virtual void prepare(const Config&) {}

  // Measures one configuration. Failures of the configuration are statuses, not exceptions;
  // kError means the infrastructure failed and stops the run. Throws only for usage errors.
  virtual Measurement measure(const Config& config) = 0;
};

// Seconds on a monotonic clock; tests substitute a fake.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual double now_seconds() = 0;
};

class SteadyClock : public Clock {
 public:
  double now_seconds() override;
};

}  // namespace mgk::tune
