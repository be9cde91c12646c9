// The evaluator's verdict turned into the next message to the model: which feedback
// template answers it, and the values that fill it (compile log, mismatch report, a table
// of per-size timings with the roofline fraction, per-rank times).
#pragma once
#include <optional>
#include <string>

#include "agent/prompt_library.h"
#include "eval/result.h"

namespace mgk::agent {

// True when every size of the result was timed against the reference. A correct result
// from ranks sharing a GPU (or a --no-time check) was only checked.
bool timed(const eval::EvalResult& result);

// The slowest speedup over the sizes, for a correct, timed result; nullopt otherwise. This
// is what "best kernel" ranks by: a kernel is only as good as its worst size.
std::optional<double> min_speedup(const eval::EvalResult& result);

// "feedback/compile_error", "feedback/refused" (a check's rule broken), "feedback/mismatch", "feedback/correct_fast",
// "feedback/correct_untimed" (correct, nothing timed), "feedback/compiled" (--compile-only).
std::string feedback_template(const eval::EvalResult& result);

// The variables feedback_template(result) uses, plus "turn" and "max_turns".
TemplateVars feedback_vars(const eval::EvalResult& result, int turn, int max_turns);

std::string render_feedback(const PromptLibrary& prompts, const eval::EvalResult& result,
                            int turn, int max_turns);

// "correct 1.42x", "correct (not timed)", "incorrect", "compile_error", ...: one word or
// two for progress lines.
std::string verdict_summary(const eval::EvalResult& result);

}  // namespace mgk::agent
