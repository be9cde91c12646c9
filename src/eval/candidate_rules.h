// The rules a candidate kernel is held to, one entry per class of refusal. The source,
// PTX, import and host-code checks name the class they enforce; the model's system prompt
// lists every class (prompts/rules/<id>.md says what is refused and what to use instead),
// and a refusal's feedback quotes its class's text. So the prompt and the checks cannot
// drift: a class added here without its prompt text fails a CPU test.
#pragma once
#include <span>
#include <string>

namespace mgk::eval {

enum class Rule {
  kNccl,
  kMulticast,
  kCodeLoading,
  kOracle,
  kDeviceReset,
  kProcesses,
  kThreads,
  kSystemCalls,
  kMemoryMapping,
  kSockets,
  kProcessControl,
  kFiles,
  kLinking,
  kShadowing,
  kHiddenCode,
};

struct RuleInfo {
  Rule rule;
  const char* id;   // prompts/rules/<id>.md; stored with a refused attempt
  const char* why;  // the refusal's reason, as the checks print it
};

// Every class, in the order the prompt lists them.
std::span<const RuleInfo> candidate_rules();
const RuleInfo& rule_info(Rule rule);

}  // namespace mgk::eval
