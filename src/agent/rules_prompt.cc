#include "agent/rules_prompt.h"

#include "common/text.h"
#include "eval/candidate_rules.h"
#include "eval/compile.h"
#include "eval/evaluate.h"

namespace mgk::agent {
namespace {

std::string joined(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

// A multi-line text as one Markdown bullet: continuation lines indented under it.
std::string bullet(const std::string& text) {
  std::string out = "- ";
  for (char c : text) {
    out += c;
    if (c == '\n') out += "  ";
  }
  return out;
}

}  // namespace

std::string rule_text(const PromptLibrary& prompts, const std::string& rule_id) {
  return chomp(prompts.render("rules/" + rule_id, {}));
}

std::string build_section(const PromptLibrary& prompts, const std::string& arch) {
  std::string rules;
  for (const auto& r : eval::candidate_rules()) rules += (rules.empty() ? "" : "\n") + bullet(rule_text(prompts, r.id));
  return chomp(prompts.render("parts/build", {{"nvcc_flags", joined(eval::nvcc_flags(arch))},
                                              {"libraries", joined(eval::linked_libraries(false))},
                                              {"rules", rules}}));
}

std::string judging_section(const PromptLibrary& prompts) {
  const eval::EvalOptions defaults;
  return chomp(prompts.render("parts/judging", {{"trials", std::to_string(defaults.trials)},
                                                {"back_to_back", std::to_string(defaults.back_to_back)},
                                                {"timeout_seconds", plain_number(defaults.timeout_seconds)}}));
}

}  // namespace mgk::agent
