// The production objective: the evaluator. A configuration's score is the candidate's median
// time at one size preset, counted only when the verdict is correct; the configuration is
// compiled ahead (prepare) into the evaluator's compile cache while the previous one runs.
#pragma once
#include <map>
#include <mutex>
#include <string>

#include "eval/compile.h"
#include "eval/evaluate.h"
#include "tune/objective.h"

namespace mgk::tune {

// How each verdict counts for the tuner.
TrialStatus status_for(eval::Verdict verdict);

// One evaluation as a measurement: the candidate median at `size` for a correct verdict (an
// error if that size was not timed), else the mapped status and a one-line reason.
Measurement measurement_from(const eval::EvalResult& result, const std::string& size);

// The line of an nvcc log that says what failed (the first "error" line), shortened.
std::string first_error_line(const std::string& compile_log);

class EvalObjective : public Objective {
 public:
  // `base` names the problem, kernel, world size, GPUs and evaluator settings; its defines
  // are replaced per configuration. Every trial is checked at base.sizes plus `size`; when
  // base.sizes is empty, at `size` and the first other default preset of the problem.
  // Throws UsageError for an unknown problem or size.
  EvalObjective(const SearchSpace& space, eval::EvalOptions base, std::string size);

  void prepare(const Config& config) override;
  Measurement measure(const Config& config) override;

  const eval::EvalOptions& base() const { return base_; }

 private:
  eval::EvalOptions options_for(const Config& config) const;

  const SearchSpace& space_;
  eval::EvalOptions base_;
  std::string size_;
  std::mutex mu_;
  std::map<std::string, eval::CompileResult> compiled_;  // by canonical params
};

}  // namespace mgk::tune
