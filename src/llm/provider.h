// The one interface the agent talks to a language model through, whatever the vendor:
// a request (system prompt + alternating messages) in, a reply (text, finish reason, token
// usage, cost, latency) out. Implementations retry transient failures themselves following
// the official SDKs' policy (see retry.h) and throw llm::ApiError when they give up, and
// mgk::Interrupted when the request's cancel flag is raised.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "llm/config.h"

namespace mgk::llm {

struct Message {
  std::string role;  // "user" | "assistant"
  std::string content;
};

// Output tokens per reply when the caller does not say (the agent's default too:
// agent/config.h's Sampling).
inline constexpr int kDefaultMaxTokens = 16384;

struct Request {
  std::string system;  // system prompt (top-level for Anthropic, a system message for OpenAI)
  std::vector<Message> messages;
  int max_tokens = kDefaultMaxTokens;
  std::optional<double> temperature;
  std::optional<std::string> reasoning_effort;  // passed through ("low"/"medium"/"high")
  // When it turns true (Ctrl-C) the call ends at once, mid-transfer or mid-wait between
  // retries, throwing mgk::Interrupted. Null: never cancelled.
  const std::atomic<bool>* cancel = nullptr;
};

// Token counts of one reply, the same meaning for every vendor: input_tokens counts the
// whole prompt, cached and cache-written tokens included (both are subsets of it);
// output_tokens counts everything generated, reasoning tokens included.
struct Usage {
  int64_t input_tokens = 0, output_tokens = 0, cached_input_tokens = 0,
          cache_creation_tokens = 0, reasoning_tokens = 0;
};

enum class FinishReason { kStop, kLength, kContentFilter, kToolUse, kOther };

struct Reply {
  std::string text;
  FinishReason finish = FinishReason::kStop;
  std::string raw_finish;  // the vendor's own word ("stop", "end_turn", "max_tokens", ...)
  Usage usage;
  std::optional<double> cost_usd;  // from the price table; none when the model has no price (unknown)
  double latency_s = 0;  // wall time of the whole complete() call, retries and waits included
  int attempts = 1;      // HTTP requests sent, 1 when the first one succeeded
  std::string model;     // model as the server reported it
};

class Provider {
 public:
  virtual ~Provider() = default;
  // Sends the request, retrying transient failures; throws llm::ApiError when it gives up
  // or the reply cannot be understood. Safe to call from several threads at once.
  virtual Reply complete(const Request& request) = 0;
  virtual std::string name() const = 0;  // "openai:gpt-4o"
  // What replies are billed at, and the price table's entry for it; nullopt when no price
  // is known for the model (its cost is then unknown, not zero).
  virtual std::optional<PriceMatch> price() const = 0;
};

// "openai:gpt-4o", "anthropic:claude-sonnet-4-5", "together:meta-llama/...", "vllm:qwen", ...
// The part before the first ':' names an endpoint of `config`; the rest is the model.
// Throws UsageError for a malformed spec, an unknown prefix (listing the valid ones) or a
// required API key that is not set (naming the variable).
std::unique_ptr<Provider> make_provider(const std::string& spec, const Config& config);

const char* to_string(FinishReason finish);

}  // namespace mgk::llm
