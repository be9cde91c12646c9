#include "llm/openai_chat.h"

#include "llm/api_error.h"
#include "llm/json_fields.h"

namespace mgk::llm {

using nlohmann::json;

json openai_chat_body(const Request& request, const std::string& model,
                      const std::string& max_tokens_field) {
  json messages = json::array();
  if (!request.system.empty())
    messages.push_back({{"role", "system"}, {"content", request.system}});
  for (const auto& m : request.messages)
    messages.push_back({{"role", m.role}, {"content", m.content}});
  json body = {{"model", model}, {"messages", std::move(messages)}};
  body[max_tokens_field] = request.max_tokens;
  if (request.temperature) body["temperature"] = *request.temperature;
  if (request.reasoning_effort) body["reasoning_effort"] = *request.reasoning_effort;
  return body;
}

FinishReason openai_finish_reason(const std::string& raw) {
  if (raw == "stop") return FinishReason::kStop;
  if (raw == "length") return FinishReason::kLength;
  if (raw == "content_filter") return FinishReason::kContentFilter;
  if (raw == "tool_calls" || raw == "function_call") return FinishReason::kToolUse;
  return FinishReason::kOther;
}

Reply parse_openai_chat_reply(const json& reply) {
  reject_error_object(reply);
  if (!reply.contains("choices") || !reply["choices"].is_array() || reply["choices"].empty())
    throw ReplyShapeError("has no choices[0]");
  const json& choice = reply["choices"][0];
  const json& message = object_field(choice, "message", "choices[0].message");

  Reply out;
  const json content = message.value("content", json());
  if (content.is_string()) {
    out.text = content.get<std::string>();
  } else if (content.is_array()) {  // some servers send a list of typed parts
    for (const auto& part : content)
      if (part.is_object() && part.value("type", "") == "text")
        out.text += string_field(part, "text", "choices[0].message.content[].text");
  } else if (!content.is_null()) {
    throw ReplyShapeError("has a choices[0].message.content that is neither text nor null");
  }
  out.raw_finish = string_field(choice, "finish_reason", "choices[0].finish_reason");
  out.finish = openai_finish_reason(out.raw_finish);
  out.model = string_field(reply, "model", "model");

  const json usage = reply.value("usage", json());
  out.usage.input_tokens = count_field(usage, "prompt_tokens", "usage.prompt_tokens");
  out.usage.output_tokens = count_field(usage, "completion_tokens", "usage.completion_tokens");
  if (usage.is_object()) {
    // DeepSeek counts its cache hits at the top level, not in prompt_tokens_details.
    out.usage.cached_input_tokens =
        usage.contains("prompt_cache_hit_tokens")
            ? count_field(usage, "prompt_cache_hit_tokens", "usage.prompt_cache_hit_tokens")
            : count_field(usage.value("prompt_tokens_details", json()), "cached_tokens",
                          "usage.prompt_tokens_details.cached_tokens");
    out.usage.reasoning_tokens =
        count_field(usage.value("completion_tokens_details", json()), "reasoning_tokens",
                    "usage.completion_tokens_details.reasoning_tokens");
  }
  return out;
}

}  // namespace mgk::llm
