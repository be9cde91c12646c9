// The production objective: the evaluator. A configuration's score is the candidate's median
// time at one size preset, or the geometric mean of its medians at several ("small,large"),
// counted only when the verdict is correct; the configuration is compiled ahead (prepare)
// into the evaluator's compile cache while the previous one runs.
//
// Why the geometric mean of times: it ranks configurations exactly as the geometric mean of
// their speedups over a fixed reference would (the reference's times divide out), without
// the noise of timing the reference again in every trial; and, unlike a sum, no one size
// (the largest) outweighs the others, so a knob whose best value changes between sizes is
// tuned for all of them.
#pragma once
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "eval/compile.h"
#include "eval/evaluate.h"
#include "tune/objective.h"

namespace mgk::tune {

// How each verdict counts for the tuner.
TrialStatus status_for(results::Verdict verdict);

// The size presets a --size value names: "medium" or "small,large" (duplicates dropped).
std::vector<std::string> tuning_sizes(const std::string& size);

// One evaluation as a measurement: for a correct verdict, the candidate median at `size`, or
// the geometric mean of the medians at each of a list ("small,large"; an error if one was
// not timed); else the mapped status and a one-line reason.
Measurement measurement_from(const results::EvalResult& result, const std::string& size);

// The line of an nvcc log that says what failed (the first "error" line), shortened.
std::string first_error_line(const std::string& compile_log);

class EvalObjective : public Objective {
 public:
  // `base` names the problem, kernel, world size, GPUs and evaluator settings; its defines
  // are replaced per configuration. `size` is one preset or a list ("small,large"). Every
  // trial is checked at base.sizes plus those; when base.sizes is empty and `size` is one
  // preset, at it and the first other default preset of the problem.
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
