// The Anthropic messages wire format (POST {base_url}/v1/messages).
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "llm/provider.h"

namespace mgk::llm {

// The request body: max_tokens always (the API requires it), system at the top level when
// not empty. The system prompt and the last message are text blocks marked cache_control
// ephemeral (prompt caching; the other messages stay plain strings). reasoning_effort turns
// on extended thinking with a budget that is a share of max_tokens (minimal/low 1/4, medium 1/2, high 3/4, at least 1024); temperature is then
// left out, as the API refuses it with thinking. Throws UsageError for an unknown effort
// or a max_tokens too small to hold a thinking budget.
nlohmann::json anthropic_messages_body(const Request& request, const std::string& model);

// Text blocks of content[] concatenated (thinking and tool blocks skipped), stop reason,
// usage (input_tokens normalised to include cache reads and writes), model. Throws
// ReplyShapeError when content[] is missing or a field has the wrong type.
Reply parse_anthropic_reply(const nlohmann::json& reply);

FinishReason anthropic_finish_reason(const std::string& raw);

// The API version this client speaks, sent as the anthropic-version header.
inline constexpr const char* kAnthropicVersion = "2023-06-01";

}  // namespace mgk::llm
