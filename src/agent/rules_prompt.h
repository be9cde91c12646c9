// The model's side of eval/candidate_rules.h: the system prompt's section on how a kernel is
// built and what is refused (prompts/parts/build.md, one prompts/rules/<id>.md per class),
// and the one rule a refusal's feedback quotes. Rendered from the checks' own tables, so
// what the model is told is what the evaluator enforces.
#pragma once
#include <string>

#include "agent/prompt_library.h"

namespace mgk::agent {

// The build section for kernels compiled for `arch` (e.g. "sm_90a"; empty: sm_90a).
std::string build_section(const PromptLibrary& prompts, const std::string& arch);

// The rules of a call and how each size preset is judged (prompts/parts/judging.md), with the
// evaluator's own defaults (trials, back-to-back calls, the hang timeout: eval::EvalOptions).
std::string judging_section(const PromptLibrary& prompts);

// prompts/rules/<rule_id>.md, without its final newline.
std::string rule_text(const PromptLibrary& prompts, const std::string& rule_id);

}  // namespace mgk::agent
