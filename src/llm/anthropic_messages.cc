#include "llm/anthropic_messages.h"

#include <algorithm>

#include "common/error.h"
#include "common/log.h"
#include "llm/api_error.h"
#include "llm/json_fields.h"

namespace mgk::llm {

using nlohmann::json;

namespace {

constexpr int kMinThinkingBudget = 1024;  // the API's floor

int thinking_budget(const std::string& effort, int max_tokens) {
  int quarters = 0;
  if (effort == "minimal" || effort == "low") quarters = 1;
  else if (effort == "medium") quarters = 2;
  else if (effort == "high") quarters = 3;
  else
    throw UsageError("reasoning_effort '" + effort +
                     "' is not one of minimal, low, medium, high (for Anthropic models)");
  if (max_tokens <= kMinThinkingBudget)
    throw UsageError("reasoning_effort needs max_tokens above " +
                     std::to_string(kMinThinkingBudget) + " for Anthropic models (got " +
                     std::to_string(max_tokens) + ")");
  return std::max(kMinThinkingBudget, max_tokens / 4 * quarters);
}

}  // namespace

json anthropic_messages_body(const Request& request, const std::string& model) {
  // Prompt caching: a breakpoint after the system prompt (the same in every turn of a
  // session) and one after the last message, so the next turn, which repeats this whole
  // request as its prefix, reads it from the cache at a tenth of the input price.
  const json ephemeral = {{"type", "ephemeral"}};
  json messages = json::array();
  for (size_t i = 0; i < request.messages.size(); ++i) {
    const Message& m = request.messages[i];
    if (i + 1 < request.messages.size())
      messages.push_back({{"role", m.role}, {"content", m.content}});
    else
      messages.push_back(
          {{"role", m.role},
           {"content", json::array({{{"type", "text"}, {"text", m.content}, {"cache_control", ephemeral}}})}});
  }
  json body = {{"model", model}, {"max_tokens", request.max_tokens},
               {"messages", std::move(messages)}};
  if (!request.system.empty())
    body["system"] =
        json::array({{{"type", "text"}, {"text", request.system}, {"cache_control", ephemeral}}});
  if (request.reasoning_effort) {
    body["thinking"] = {{"type", "enabled"},
                        {"budget_tokens",
                         thinking_budget(*request.reasoning_effort, request.max_tokens)}};
    if (request.temperature)
      log::warning("temperature is not sent to Anthropic model '" + model +
                   "': extended thinking (reasoning_effort) does not allow it");
  } else if (request.temperature) {
    body["temperature"] = *request.temperature;
  }
  return body;
}

FinishReason anthropic_finish_reason(const std::string& raw) {
  if (raw == "end_turn" || raw == "stop_sequence") return FinishReason::kStop;
  if (raw == "max_tokens" || raw == "model_context_window_exceeded") return FinishReason::kLength;
  if (raw == "tool_use") return FinishReason::kToolUse;
  if (raw == "refusal") return FinishReason::kContentFilter;
  return FinishReason::kOther;
}

Reply parse_anthropic_reply(const json& reply) {
  reject_error_object(reply);
  if (!reply.contains("content") || !reply["content"].is_array())
    throw ReplyShapeError("has no content[] array");
  Reply out;
  for (const auto& block : reply["content"]) {
    if (!block.is_object()) throw ReplyShapeError("has a content[] entry that is not an object");
    if (block.value("type", "") == "text") out.text += string_field(block, "text", "content[].text");
  }
  out.raw_finish = string_field(reply, "stop_reason", "stop_reason");
  out.finish = anthropic_finish_reason(out.raw_finish);
  out.model = string_field(reply, "model", "model");

  const json usage = reply.value("usage", json());
  int64_t fresh = count_field(usage, "input_tokens", "usage.input_tokens");
  out.usage.cached_input_tokens =
      count_field(usage, "cache_read_input_tokens", "usage.cache_read_input_tokens");
  out.usage.cache_creation_tokens =
      count_field(usage, "cache_creation_input_tokens", "usage.cache_creation_input_tokens");
  out.usage.input_tokens = fresh + out.usage.cached_input_tokens + out.usage.cache_creation_tokens;
  out.usage.output_tokens = count_field(usage, "output_tokens", "usage.output_tokens");
  return out;
}

}  // namespace mgk::llm
