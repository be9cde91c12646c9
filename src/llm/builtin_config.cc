// The endpoint presets and price table mgk ships with. Prices are list prices in dollars per
// million tokens as published by the vendors (late 2025); a config file overrides them.
#include "llm/config.h"

#include <cctype>

namespace mgk::llm {
namespace {

Endpoint preset(std::string name, ApiKind kind, std::string base_url, std::string key_env,
                bool key_required) {
  Endpoint e;
  e.kind = kind;
  e.base_url = std::move(base_url);
  e.api_key_env = std::move(key_env);
  e.api_key_required = key_required;
  e.name = std::move(name);
  return e;
}

}  // namespace

std::string default_base_url_env(const std::string& prefix) {
  std::string name;
  for (char ch : prefix)
    name += std::isalnum(static_cast<unsigned char>(ch))
                ? static_cast<char>(std::toupper(static_cast<unsigned char>(ch)))
                : '_';
  return name + "_BASE_URL";
}

Config builtin_config() {
  Config c;
  auto add = [&c](Endpoint e) {
    e.base_url_env = default_base_url_env(e.name);
    c.endpoints[e.name] = std::move(e);
  };
  Endpoint openai = preset("openai", ApiKind::kOpenAI, "https://api.openai.com/v1",
                           "OPENAI_API_KEY", true);
  openai.max_tokens_field = "max_completion_tokens";  // max_tokens is refused by o-series/gpt-5
  add(openai);
  add(preset("anthropic", ApiKind::kAnthropic, "https://api.anthropic.com",
             "ANTHROPIC_API_KEY", true));
  add(preset("together", ApiKind::kOpenAI, "https://api.together.xyz/v1", "TOGETHER_API_KEY",
             true));
  add(preset("openrouter", ApiKind::kOpenAI, "https://openrouter.ai/api/v1",
             "OPENROUTER_API_KEY", true));
  add(preset("deepseek", ApiKind::kOpenAI, "https://api.deepseek.com/v1", "DEEPSEEK_API_KEY",
             true));
  // Local servers: a key only when the server was started with one.
  add(preset("vllm", ApiKind::kOpenAI, "http://localhost:8000/v1", "VLLM_API_KEY", false));
  add(preset("sglang", ApiKind::kOpenAI, "http://localhost:30000/v1", "SGLANG_API_KEY", false));
  add(preset("ollama", ApiKind::kOpenAI, "http://localhost:11434/v1", "OLLAMA_API_KEY", false));

  // OpenAI: cached input at the published cached rate. Each entry also prices the dated
  // names of its family (Config::price), so the cheaper and dearer members of a family
  // (-mini, -nano, -pro) need entries of their own.
  c.prices["gpt-5"] = {1.25, 0.125, 10.0, std::nullopt};
  c.prices["gpt-5-mini"] = {0.25, 0.025, 2.0, std::nullopt};
  c.prices["gpt-5-nano"] = {0.05, 0.005, 0.4, std::nullopt};
  c.prices["gpt-5-pro"] = {15.0, 15.0, 120.0, std::nullopt};
  c.prices["gpt-4.1"] = {2.0, 0.5, 8.0, std::nullopt};
  c.prices["gpt-4.1-mini"] = {0.4, 0.1, 1.6, std::nullopt};
  c.prices["gpt-4.1-nano"] = {0.1, 0.025, 0.4, std::nullopt};
  c.prices["gpt-4o"] = {2.5, 1.25, 10.0, std::nullopt};
  c.prices["gpt-4o-mini"] = {0.15, 0.075, 0.6, std::nullopt};
  c.prices["o3"] = {2.0, 0.5, 8.0, std::nullopt};
  c.prices["o3-mini"] = {1.1, 0.55, 4.4, std::nullopt};
  c.prices["o3-pro"] = {20.0, 20.0, 80.0, std::nullopt};
  c.prices["o4-mini"] = {1.1, 0.275, 4.4, std::nullopt};
  // Anthropic: cache reads at 0.1x input, 5-minute cache writes at 1.25x input.
  c.prices["claude-opus-4-5"] = {5.0, 0.5, 25.0, 6.25};
  c.prices["claude-opus-4-1"] = {15.0, 1.5, 75.0, 18.75};
  c.prices["claude-opus-4"] = {15.0, 1.5, 75.0, 18.75};
  c.prices["claude-sonnet-4-5"] = {3.0, 0.3, 15.0, 3.75};
  c.prices["claude-sonnet-4"] = {3.0, 0.3, 15.0, 3.75};
  c.prices["claude-3-7-sonnet"] = {3.0, 0.3, 15.0, 3.75};
  c.prices["claude-haiku-4-5"] = {1.0, 0.1, 5.0, 1.25};
  c.prices["claude-3-5-haiku"] = {0.8, 0.08, 4.0, 1.0};
  // DeepSeek (V3.2 for both names): cache hits at the cache-hit rate.
  c.prices["deepseek:deepseek-chat"] = {0.28, 0.028, 0.42, std::nullopt};
  c.prices["deepseek:deepseek-reasoner"] = {0.28, 0.028, 0.42, std::nullopt};
  return c;
}

}  // namespace mgk::llm
