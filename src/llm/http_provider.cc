#include "llm/http_provider.h"

#include <chrono>

#include "common/error.h"
#include "llm/anthropic_messages.h"
#include "llm/api_call.h"
#include "llm/cost.h"
#include "llm/json_fields.h"
#include "llm/openai_chat.h"

namespace mgk::llm {
namespace {

std::string join_url(std::string base, const std::string& path) {
  while (!base.empty() && base.back() == '/') base.pop_back();
  return base + path;
}

void check_request(const Request& request) {
  if (request.messages.empty())
    throw UsageError("a model request needs at least one message");
  for (const auto& m : request.messages)
    if (m.role != "user" && m.role != "assistant")
      throw UsageError("message role '" + m.role + "' is not \"user\" or \"assistant\"");
  if (request.max_tokens <= 0)
    throw UsageError("max_tokens must be positive, not " + std::to_string(request.max_tokens));
}

}  // namespace

HttpProvider::HttpProvider(Endpoint endpoint, std::string model, std::string base_url,
                           std::string api_key, const Config& config)
    : endpoint_(std::move(endpoint)),
      model_(std::move(model)),
      api_key_(std::move(api_key)),
      timeout_s_(config.timeout_s),
      connect_timeout_s_(config.connect_timeout_s),
      sleep_(config.sleep),
      max_reply_bytes_(config.max_reply_bytes),
      price_(config.price(endpoint_.name, model_)) {
  url_ = join_url(base_url, endpoint_.kind == ApiKind::kAnthropic ? "/v1/messages"
                                                                  : "/chat/completions");
  retry_.max_retries = config.max_retries;
}

Reply HttpProvider::complete(const Request& request) {
  check_request(request);
  auto start = std::chrono::steady_clock::now();
  const bool anthropic = endpoint_.kind == ApiKind::kAnthropic;

  HttpRequest http;
  http.url = url_;
  http.timeout_s = timeout_s_;
  http.connect_timeout_s = connect_timeout_s_;
  http.max_reply_bytes = max_reply_bytes_;
  http.cancel = request.cancel;
  http.body = (anthropic ? anthropic_messages_body(request, model_)
                         : openai_chat_body(request, model_, endpoint_.max_tokens_field))
                  .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);  // a stray byte is no reason to fail
  http.headers = {"Content-Type: application/json", "Accept: application/json"};
  if (anthropic) {
    http.headers.push_back(std::string("anthropic-version: ") + kAnthropicVersion);
    if (!api_key_.empty()) http.headers.push_back("x-api-key: " + api_key_);
  } else if (!api_key_.empty()) {
    http.headers.push_back("Authorization: Bearer " + api_key_);
  }
  for (const auto& [name, value] : endpoint_.headers) http.headers.push_back(name + ": " + value);

  CallSite site{endpoint_.name, model_, url_, endpoint_.api_key_env, api_key_, timeout_s_};
  CallOutcome outcome = post_with_retries(http, site, retry_, sleep_);

  Reply reply;
  try {
    nlohmann::json body = parse_reply_object(outcome.response.body);
    reply = anthropic ? parse_anthropic_reply(body) : parse_openai_chat_reply(body);
  } catch (const ReplyShapeError& e) {
    throw malformed_reply(site, e.what(), outcome.response.body, outcome.response.status,
                          outcome.attempts);
  } catch (const nlohmann::json::exception& e) {
    throw malformed_reply(site, std::string("has an unexpected field type (") + e.what() + ")",
                          outcome.response.body, outcome.response.status, outcome.attempts);
  }
  if (reply.model.empty()) reply.model = model_;
  if (price_) reply.cost_usd = cost_usd(reply.usage, price_->price);
  reply.attempts = outcome.attempts;
  reply.latency_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return reply;
}

}  // namespace mgk::llm
