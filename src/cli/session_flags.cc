#include "cli/session_flags.h"

#include "cli/options.h"

namespace mgk::cli {

CLI::Option* add_cost_option(CLI::App* c, const std::string& flag, double* usd, const std::string& help) {
  return c->add_option(flag, *usd, help)->capture_default_str()->check(at_least(0));
}

void add_sampling_options(CLI::App* c, const SamplingFlags& f) {
  c->add_option("--max-tokens", *f.max_tokens, "Output tokens per reply")->capture_default_str()->check(at_least(1));
  bool* given = f.temperature_given;
  c->add_option("--temperature", *f.temperature, "Sampling temperature (default: the provider's)")
      ->check(at_least(0))
      ->each([given](const std::string&) { *given = true; });
  std::string efforts;
  for (const auto& e : kReasoningEfforts) efforts += (efforts.empty() ? "" : ", ") + e;
  c->add_option("--reasoning-effort", *f.reasoning_effort, "Passed to the provider: " + efforts)
      ->check(CLI::Validator(
          [efforts](std::string& text) -> std::string {
            for (const auto& e : kReasoningEfforts)
              if (text == e) return "";
            return "must be one of " + efforts + ", not '" + text + "'";
          },
          "EFFORT"));
  c->add_option("--command-timeout", *f.command_timeout_s, "Shell mode: seconds a command may run")
      ->capture_default_str()
      ->check(above(0));
}

}  // namespace mgk::cli
