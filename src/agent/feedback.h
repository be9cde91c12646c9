// The evaluator's verdict turned into the next message to the model: which feedback
// template answers it, and the values that fill it (compile log, mismatch report, a table
// of per-size timings with the roofline fraction, per-rank times).
#pragma once
#include <optional>
#include <string>

#include "agent/prompt_library.h"
#include "results/eval_result.h"

namespace mgk::agent {

// "feedback/compile_error", "feedback/refused" (a check's rule broken), "feedback/mismatch", "feedback/correct_fast",
// "feedback/correct_untimed" (correct, nothing timed), "feedback/correct_not_credible" (timed, but
// under the floor or the outside clock: no speedup), "feedback/compiled" (--compile-only).
// The kernel's speedup is results::EvalResult::speedup(): its slowest size's.
std::string feedback_template(const results::EvalResult& result);

// The variables feedback_template(result) uses, plus "turn" and "max_turns"; their lines
// and table cells are prompts/feedback/pieces/.
TemplateVars feedback_vars(const PromptLibrary& prompts, const results::EvalResult& result, int turn,
                           int max_turns);

std::string render_feedback(const PromptLibrary& prompts, const results::EvalResult& result,
                            int turn, int max_turns);

// "correct 1.42x", "correct (not timed)", "incorrect", "compile_error", ...: one word or
// two for progress lines.
std::string verdict_summary(const results::EvalResult& result);

}  // namespace mgk::agent
