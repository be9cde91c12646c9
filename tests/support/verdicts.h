// Evaluation results as the evaluator returns them, for tests that script a judge or write
// evaluations into a store without a GPU.
#pragma once
#include <utility>

#include "results/eval_result.h"

namespace mgk::test {

// Correct and timed at sizes small and large with these speedups (reference 100 us).
inline results::EvalResult correct_result(double small_speedup, double large_speedup) {
  results::EvalResult r;
  r.verdict = results::Verdict::kCorrect;
  r.message = "correct";
  for (auto [name, speedup] : {std::pair{"small", small_speedup}, std::pair{"large", large_speedup}}) {
    results::SizeResult s;
    s.size = name;
    s.correct = true;
    s.trials_passed = 3;
    s.reference = results::Timing{100, 99, 101, 98, 100, {100, 99}};
    s.candidate = results::Timing{100 / speedup, 99 / speedup, 101 / speedup, 98 / speedup, 100,
                               {100 / speedup, 99 / speedup}};
    s.speedup = speedup;
    r.sizes.push_back(s);
  }
  return r;
}

}  // namespace mgk::test
