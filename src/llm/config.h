// Where models are served and what they cost: endpoints by spec prefix, a price table, and
// the HTTP defaults. Built-in presets cover the common vendors and local servers; a JSON
// file ($MGK_CONFIG, else ~/.config/mgk/config.json) adds endpoints and overrides fields.
//
// File format (every key optional; unknown keys are an error so typos do not pass):
//   {
//     "endpoints": {
//       "openai": {"base_url": "https://proxy.example/v1"},          // override one field
//       "lab":    {"kind": "openai", "base_url": "http://gpu7:8000/v1",
//                  "api_key_env": "LAB_KEY", "api_key_required": false,
//                  "headers": {"X-Team": "kernels"}, "max_tokens_field": "max_tokens"}
//     },
//     "prices": {"gpt-4o": {"input": 2.5, "cached_input": 1.25, "output": 10},
//                "lab:qwen": {"input": 0, "output": 0}},            // $ per million tokens
//     // a price entry also covers the model's dated and vendor-qualified names (Config::price)
//     "defaults": {"timeout_s": 600, "connect_timeout_s": 5, "max_retries": 2,
//                  "max_reply_mib": 64}
//   }
// Every endpoint's base URL can be replaced from the environment, by default through
// <NAME>_BASE_URL (OPENAI_BASE_URL, VLLM_BASE_URL, LAB_BASE_URL), or "base_url_env".
// "api_key_env": null makes an endpoint keyless.
#pragma once
#include <cstddef>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mgk::llm {

enum class ApiKind { kOpenAI, kAnthropic };  // chat completions | messages

struct Endpoint {
  std::string name;  // the spec prefix: "openai", "vllm", ...
  ApiKind kind = ApiKind::kOpenAI;
  // OpenAI-style base URLs end in /v1 (the path appended is /chat/completions); Anthropic's
  // do not (the path appended is /v1/messages), as in each vendor's SDK.
  std::string base_url;
  std::string base_url_env;  // when this variable is set it replaces base_url
  std::string api_key_env;   // variable holding the key; "" = this endpoint takes no key
  bool api_key_required = true;
  std::map<std::string, std::string> headers;  // extra headers sent with every request
  std::string max_tokens_field = "max_tokens";  // OpenAI's own API wants max_completion_tokens
};

// Dollars per million tokens. Cached input is priced separately; cache writes (Anthropic)
// cost cache_write when given, else the input price.
struct Price {
  double input = 0;
  double cached_input = 0;
  double output = 0;
  std::optional<double> cache_write;
};

// A price found for a model, and the table entry it came from: the exact name, or the
// family a dated or provider-qualified name belongs to (Config::price).
struct PriceMatch {
  Price price;
  std::string entry;  // "claude-sonnet-4-5", "lab:qwen", ...
  bool exact = true;  // false: matched by family
};

// Waits `seconds` between retries. Tests inject one that records instead of sleeping.
using SleepFn = std::function<void(double seconds)>;

struct Config {
  std::map<std::string, Endpoint> endpoints;  // by prefix
  std::map<std::string, Price> prices;        // by "prefix:model" or plain "model"
  double timeout_s = 600;                     // per HTTP attempt
  double connect_timeout_s = 5;
  int max_retries = 2;                        // retries after the first attempt
  // A reply body (decompressed) larger than this is refused: no model reply comes near it,
  // and reading a runaway one whole would take the machine's memory.
  std::size_t max_reply_bytes = 64u << 20;
  SleepFn sleep;                              // empty = really sleep

  // The endpoint for a spec prefix; throws UsageError listing the valid prefixes.
  const Endpoint& endpoint(const std::string& prefix) const;
  // The price of `model` served by `prefix`: the entry "prefix:model", else "model", else
  // the model's family: the name lower-cased, without a vendor path ("anthropic/" on
  // OpenRouter), a date or "-latest" suffix ("-20250929", "-2024-08-06", "@20250929"),
  // with '.' read as '-' ("claude-sonnet-4.5"), matched to the longest entry it starts with
  // up to a '-' ("gpt-4o-mini-2024-07-18" -> "gpt-4o-mini"). Entries "other:model" count
  // only for endpoint "other". nullopt when nothing matches.
  std::optional<PriceMatch> price(const std::string& prefix, const std::string& model) const;
  std::vector<std::string> prefixes() const;  // sorted
};

// "<PREFIX>_BASE_URL" with the prefix upper-cased and other characters made '_': the
// variable that overrides an endpoint's base URL unless the config names another.
std::string default_base_url_env(const std::string& prefix);

// The presets: openai, anthropic, together, openrouter, deepseek, vllm, sglang, ollama, and
// a few current prices.
Config builtin_config();

// The built-ins with the JSON text layered on top; `origin` names the source in errors.
// Throws UsageError on malformed JSON, unknown keys or wrong types.
Config parse_config(const std::string& json_text, const std::string& origin);

// builtin_config() layered with the file at `path`; throws UsageError if it is unreadable.
Config load_config_file(const std::filesystem::path& path);

// $MGK_CONFIG (which must exist), else $XDG_CONFIG_HOME/mgk/config.json, else
// ~/.config/mgk/config.json; a missing default file means the built-ins alone.
std::filesystem::path default_config_path();
Config load_config();

}  // namespace mgk::llm
