// How the agent has a kernel file judged. The real judge runs the evaluator on the GPUs;
// tests (CI has no GPU) give a scripted one.
#pragma once
#include <filesystem>

#include "eval/evaluate.h"
#include "results/eval_result.h"

namespace mgk::agent {

class Judge {
 public:
  virtual ~Judge() = default;
  // Compiles, checks and times the file. Anything the kernel does is in the verdict;
  // throws mgk::Error only when the judge itself cannot work.
  virtual results::EvalResult judge(const std::filesystem::path& kernel_file) = 0;
};

// eval::evaluate with fixed options (problem, world size, GPUs, sizes); only the kernel
// changes from call to call.
class EvaluatorJudge : public Judge {
 public:
  explicit EvaluatorJudge(eval::EvalOptions options) : options_(std::move(options)) {}
  results::EvalResult judge(const std::filesystem::path& kernel_file) override;
  const eval::EvalOptions& options() const { return options_; }

 private:
  eval::EvalOptions options_;
};

}  // namespace mgk::agent
