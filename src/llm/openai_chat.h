// The OpenAI chat-completions wire format (POST {base_url}/chat/completions), spoken by
// OpenAI and by Together, OpenRouter, DeepSeek, vLLM, SGLang and Ollama.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "llm/provider.h"

namespace mgk::llm {

// The request body: the system prompt as the first message (when not empty), max_tokens
// under `max_tokens_field`, temperature and reasoning_effort only when set.
nlohmann::json openai_chat_body(const Request& request, const std::string& model,
                                const std::string& max_tokens_field);

// Text, finish reason, usage and model of a reply; cost and latency are left to the caller.
// Throws ReplyShapeError when choices[0].message is missing or a field has the wrong type.
Reply parse_openai_chat_reply(const nlohmann::json& reply);

FinishReason openai_finish_reason(const std::string& raw);

}  // namespace mgk::llm
