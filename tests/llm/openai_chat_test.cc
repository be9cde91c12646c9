// The OpenAI chat-completions format over real HTTP: what is sent, what is read back.
#include "llm/openai_chat.h"

#include <gtest/gtest.h>

#include <set>
#include <thread>

#include "llm/api_error.h"
#include "llm/provider.h"
#include "llm_test_env.h"
#include "support/scripted_server.h"

namespace mgk::llm {
namespace {

using mgk::test::ScriptedResponse;
using mgk::test::ScriptedServer;
using nlohmann::json;
using test::ScopedEnv;

class OpenAIChatTest : public ::testing::Test {
 protected:
  ScopedEnv key_{"OPENAI_API_KEY", test::kOpenAIKey};
  ScopedEnv no_vllm_key_{"VLLM_API_KEY", std::nullopt};
  std::vector<double> waits_;
};

TEST_F(OpenAIChatTest, NormalReplyGivesTextTokensAndExactCost) {
  ScriptedServer server({ScriptedResponse::json(
      200, mgk::test::openai_chat_reply("the kernel", {.input = 1000, .output = 200, .cached = 400,
                                                       .reasoning = 50}))});
  Config config = test::config_for(server, waits_);
  auto provider = make_provider("openai:gpt-4o", config);
  EXPECT_EQ(provider->name(), "openai:gpt-4o");
  Request request;
  request.messages = {{"user", "write it"}};
  Reply reply = provider->complete(request);

  EXPECT_EQ(reply.text, "the kernel");
  EXPECT_EQ(reply.finish, FinishReason::kStop);
  EXPECT_EQ(reply.raw_finish, "stop");
  EXPECT_EQ(reply.model, "gpt-4o-2024-08-06");
  EXPECT_EQ(reply.attempts, 1);
  EXPECT_EQ(reply.usage.input_tokens, 1000);
  EXPECT_EQ(reply.usage.cached_input_tokens, 400);
  EXPECT_EQ(reply.usage.output_tokens, 200);
  EXPECT_EQ(reply.usage.reasoning_tokens, 50);
  EXPECT_EQ(reply.usage.cache_creation_tokens, 0);
  // gpt-4o: $2.50 / $1.25 cached / $10 per million: 600*2.5 + 400*1.25 + 200*10 = 4000 micro$.
  EXPECT_DOUBLE_EQ(reply.cost_usd.value(), 0.004);
  EXPECT_GT(reply.latency_s, 0);
  EXPECT_TRUE(waits_.empty());
}

TEST_F(OpenAIChatTest, RequestCarriesSystemMessageLimitsAndHeaders) {
  ScriptedServer server({ScriptedResponse::json(200, mgk::test::openai_chat_reply("ok"))});
  Config config = test::config_for(server, waits_);
  config.endpoints["openai"].headers["OpenAI-Organization"] = "org-kernels";
  auto provider = make_provider("openai:o3", config);
  Request request;
  request.system = "You write CUDA.";
  request.messages = {{"user", "first"}, {"assistant", "draft"}, {"user", "again"}};
  request.max_tokens = 1234;
  request.temperature = 0.25;
  request.reasoning_effort = "high";
  provider->complete(request);

  auto requests = server.requests();
  ASSERT_EQ(requests.size(), 1u);
  const auto& sent = requests[0];
  EXPECT_EQ(sent.method, "POST");
  EXPECT_EQ(sent.path, "/v1/chat/completions");
  EXPECT_EQ(sent.header("authorization"), std::string("Bearer ") + test::kOpenAIKey);
  EXPECT_EQ(sent.header("content-type"), "application/json");
  EXPECT_EQ(sent.header("openai-organization"), "org-kernels");
  json expected_messages = json::array({{{"role", "system"}, {"content", "You write CUDA."}},
                                        {{"role", "user"}, {"content", "first"}},
                                        {{"role", "assistant"}, {"content", "draft"}},
                                        {{"role", "user"}, {"content", "again"}}});
  EXPECT_EQ(sent.json["model"], "o3");
  EXPECT_EQ(sent.json["messages"], expected_messages);
  EXPECT_EQ(sent.json["max_completion_tokens"], 1234);  // OpenAI's own API
  EXPECT_FALSE(sent.json.contains("max_tokens"));
  EXPECT_DOUBLE_EQ(sent.json["temperature"].get<double>(), 0.25);
  EXPECT_EQ(sent.json["reasoning_effort"], "high");
}

TEST_F(OpenAIChatTest, LocalServerGetsMaxTokensAndNoKeyNorUnsetOptions) {
  ScriptedServer server({ScriptedResponse::json(200, mgk::test::openai_chat_reply("ok"))});
  Config config = test::config_for(server, waits_);
  auto provider = make_provider("vllm:Qwen/Qwen3-32B", config);
  Request request;
  request.messages = {{"user", "hi"}};
  request.max_tokens = 77;
  Reply reply = provider->complete(request);
  EXPECT_EQ(reply.cost_usd, std::nullopt);  // no price for a local model

  const mgk::test::RecordedRequest sent = server.requests().at(0);
  EXPECT_EQ(sent.header("authorization"), "");
  EXPECT_EQ(sent.json["model"], "Qwen/Qwen3-32B");
  EXPECT_EQ(sent.json["max_tokens"], 77);
  EXPECT_EQ(sent.json["messages"].size(), 1u);  // no empty system message
  EXPECT_FALSE(sent.json.contains("temperature"));
  EXPECT_FALSE(sent.json.contains("reasoning_effort"));
}

TEST_F(OpenAIChatTest, NullContentIsEmptyText) {
  json body = mgk::test::openai_chat_reply("", {}, "content_filter");
  body["choices"][0]["message"]["content"] = nullptr;
  ScriptedServer server({ScriptedResponse::json(200, body)});
  Config config = test::config_for(server, waits_);
  Request request;
  request.messages = {{"user", "hi"}};
  Reply reply = make_provider("openai:gpt-4o", config)->complete(request);
  EXPECT_EQ(reply.text, "");
  EXPECT_EQ(reply.finish, FinishReason::kContentFilter);
}

TEST_F(OpenAIChatTest, ConcurrentCallsOnOneProviderEachGetAReply) {
  constexpr int kCalls = 6;
  ScriptedServer server;
  for (int i = 0; i < kCalls; ++i)
    server.push(ScriptedResponse::json(200, mgk::test::openai_chat_reply("reply")));
  Config config = test::config_for(server, waits_);
  auto provider = make_provider("openai:gpt-4o", config);
  std::vector<std::string> texts(kCalls);
  std::vector<std::thread> threads;
  for (int i = 0; i < kCalls; ++i)
    threads.emplace_back([&, i] {
      Request request;
      request.messages = {{"user", "call " + std::to_string(i)}};
      texts[i] = provider->complete(request).text;
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(texts, std::vector<std::string>(kCalls, "reply"));
  std::set<std::string> asked;
  for (const auto& r : server.requests()) asked.insert(r.json["messages"][0]["content"]);
  EXPECT_EQ(asked.size(), static_cast<size_t>(kCalls));
}

TEST(OpenAIChatParse, FinishReasonsMap) {
  EXPECT_EQ(openai_finish_reason("stop"), FinishReason::kStop);
  EXPECT_EQ(openai_finish_reason("length"), FinishReason::kLength);
  EXPECT_EQ(openai_finish_reason("content_filter"), FinishReason::kContentFilter);
  EXPECT_EQ(openai_finish_reason("tool_calls"), FinishReason::kToolUse);
  EXPECT_EQ(openai_finish_reason(""), FinishReason::kOther);
}

TEST(OpenAIChatParse, MissingUsageCountsZeroAndPartsAreJoined) {
  json reply = {{"model", "m"},
                {"choices", {{{"message", {{"content", {{{"type", "text"}, {"text", "a"}},
                                                        {{"type", "text"}, {"text", "b"}}}}}},
                              {"finish_reason", "stop"}}}}};
  Reply parsed = parse_openai_chat_reply(reply);
  EXPECT_EQ(parsed.text, "ab");
  EXPECT_EQ(parsed.usage.input_tokens, 0);
  EXPECT_EQ(parsed.usage.output_tokens, 0);
}

// DeepSeek reports its cache hits as usage.prompt_cache_hit_tokens (prompt_tokens = hits +
// misses), priced at its hit rate; without them every hit was billed at the full rate.
TEST(OpenAIChatParse, DeepSeekCacheHitsAreCachedInputTokens) {
  json reply = {{"model", "deepseek-chat"},
                {"choices", {{{"message", {{"role", "assistant"}, {"content", "hi"}}}, {"finish_reason", "stop"}}}},
                {"usage", {{"prompt_tokens", 100000}, {"completion_tokens", 1000},
                           {"prompt_cache_hit_tokens", 90000}, {"prompt_cache_miss_tokens", 10000}}}};
  Reply parsed = parse_openai_chat_reply(reply);
  EXPECT_EQ(parsed.usage.input_tokens, 100000);
  EXPECT_EQ(parsed.usage.cached_input_tokens, 90000);
}

TEST(OpenAIChatParse, WrongTypesAreShapeErrors) {
  json reply = mgk::test::openai_chat_reply("x");
  reply["usage"]["prompt_tokens"] = "many";
  EXPECT_THROW(parse_openai_chat_reply(reply), ReplyShapeError);
  reply = mgk::test::openai_chat_reply("x");
  reply["choices"][0]["message"]["content"] = 42;
  EXPECT_THROW(parse_openai_chat_reply(reply), ReplyShapeError);
  EXPECT_THROW(parse_openai_chat_reply(json{{"error", {{"message", "upstream failed"}}}}),
               ReplyShapeError);
}

}  // namespace
}  // namespace mgk::llm
