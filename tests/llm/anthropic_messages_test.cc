// The Anthropic messages format over real HTTP: what is sent, what is read back.
#include "llm/anthropic_messages.h"

#include <gtest/gtest.h>

#include "common/error.h"
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

class AnthropicMessagesTest : public ::testing::Test {
 protected:
  ScopedEnv key_{"ANTHROPIC_API_KEY", test::kAnthropicKey};
  std::vector<double> waits_;
};

TEST_F(AnthropicMessagesTest, NormalReplyGivesTextTokensAndExactCost) {
  json body = mgk::test::anthropic_message_reply(
      "", {.input = 1000, .output = 300, .cached = 2000, .cache_creation = 500});
  body["content"] = json::array({{{"type", "thinking"}, {"thinking", "hmm"}, {"signature", "s"}},
                                 {{"type", "text"}, {"text", "part one, "}},
                                 {{"type", "text"}, {"text", "part two"}}});
  ScriptedServer server({ScriptedResponse::json(200, body)});
  Config config = test::config_for(server, waits_);
  auto provider = make_provider("anthropic:claude-sonnet-4-5", config);
  EXPECT_EQ(provider->name(), "anthropic:claude-sonnet-4-5");
  Request request;
  request.messages = {{"user", "write it"}};
  Reply reply = provider->complete(request);

  EXPECT_EQ(reply.text, "part one, part two");
  EXPECT_EQ(reply.finish, FinishReason::kStop);
  EXPECT_EQ(reply.raw_finish, "end_turn");
  EXPECT_EQ(reply.model, "claude-sonnet-4-5-20250929");
  EXPECT_EQ(reply.usage.input_tokens, 3500);  // uncached + cache reads + cache writes
  EXPECT_EQ(reply.usage.cached_input_tokens, 2000);
  EXPECT_EQ(reply.usage.cache_creation_tokens, 500);
  EXPECT_EQ(reply.usage.output_tokens, 300);
  // $3 in, $0.30 cache read, $3.75 cache write, $15 out per million:
  // 1000*3 + 2000*0.3 + 500*3.75 + 300*15 = 9975 micro$.
  EXPECT_DOUBLE_EQ(reply.cost_usd.value(), 0.009975);
}

TEST_F(AnthropicMessagesTest, ADatedModelNameIsBilledAtItsFamilysPrice) {
  ScriptedServer server({ScriptedResponse::json(
      200, mgk::test::anthropic_message_reply("ok", {.input = 1000, .output = 100}))});
  Config config = test::config_for(server, waits_);
  auto provider = make_provider("anthropic:claude-sonnet-4-5-20250929", config);
  ASSERT_TRUE(provider->price());
  EXPECT_EQ(provider->price()->entry, "claude-sonnet-4-5");
  Request request;
  request.messages = {{"user", "write it"}};
  // 1000 * $3 + 100 * $15 per million.
  EXPECT_DOUBLE_EQ(provider->complete(request).cost_usd.value(), 0.0045);
}

TEST_F(AnthropicMessagesTest, RequestHasTopLevelSystemMaxTokensAndHeaders) {
  ScriptedServer server({ScriptedResponse::json(200, mgk::test::anthropic_message_reply("ok"))});
  Config config = test::config_for(server, waits_);
  auto provider = make_provider("anthropic:claude-haiku-4-5", config);
  Request request;
  request.system = "You write CUDA.";
  request.messages = {{"user", "first"}, {"assistant", "draft"}, {"user", "again"}};
  request.max_tokens = 2048;
  request.temperature = 0.5;
  provider->complete(request);

  const mgk::test::RecordedRequest sent = server.requests().at(0);
  EXPECT_EQ(sent.path, "/v1/messages");
  EXPECT_EQ(sent.header("x-api-key"), test::kAnthropicKey);
  EXPECT_EQ(sent.header("anthropic-version"), "2023-06-01");
  EXPECT_EQ(sent.header("authorization"), "");
  EXPECT_EQ(sent.json["model"], "claude-haiku-4-5");
  // Prompt caching: the system prompt and the conversation so far are cache breakpoints.
  const json cached = {{"type", "ephemeral"}};
  EXPECT_EQ(sent.json["system"],
            json::array({{{"type", "text"}, {"text", "You write CUDA."}, {"cache_control", cached}}}));
  EXPECT_EQ(sent.json["max_tokens"], 2048);
  EXPECT_DOUBLE_EQ(sent.json["temperature"].get<double>(), 0.5);
  json expected_messages = json::array(
      {{{"role", "user"}, {"content", "first"}},
       {{"role", "assistant"}, {"content", "draft"}},
       {{"role", "user"},
        {"content", json::array({{{"type", "text"}, {"text", "again"}, {"cache_control", cached}}})}}});
  EXPECT_EQ(sent.json["messages"], expected_messages);
  EXPECT_FALSE(sent.json.contains("thinking"));
}

TEST_F(AnthropicMessagesTest, ReasoningEffortBecomesAThinkingBudgetWithoutTemperature) {
  ScriptedServer server({ScriptedResponse::json(200, mgk::test::anthropic_message_reply("ok"))});
  Config config = test::config_for(server, waits_);
  Request request;
  request.messages = {{"user", "think"}};
  request.max_tokens = 16000;
  request.temperature = 0.7;
  request.reasoning_effort = "medium";
  make_provider("anthropic:claude-sonnet-4-5", config)->complete(request);

  const mgk::test::RecordedRequest sent = server.requests().at(0);
  EXPECT_EQ(sent.json["thinking"], (json{{"type", "enabled"}, {"budget_tokens", 8000}}));
  EXPECT_FALSE(sent.json.contains("temperature"));
  EXPECT_FALSE(sent.json.contains("system"));  // empty system is left out
}

TEST(AnthropicMessagesBody, ThinkingBudgetRespectsTheFloorAndRejectsNonsense) {
  Request request;
  request.messages = {{"user", "x"}};
  request.max_tokens = 2000;
  request.reasoning_effort = "low";
  EXPECT_EQ(anthropic_messages_body(request, "m")["thinking"]["budget_tokens"], 1024);
  request.reasoning_effort = "extreme";
  EXPECT_THROW(anthropic_messages_body(request, "m"), UsageError);
  request.reasoning_effort = "high";
  request.max_tokens = 1000;
  EXPECT_THROW(anthropic_messages_body(request, "m"), UsageError);
}

TEST(AnthropicMessagesParse, StopReasonsMap) {
  EXPECT_EQ(anthropic_finish_reason("end_turn"), FinishReason::kStop);
  EXPECT_EQ(anthropic_finish_reason("stop_sequence"), FinishReason::kStop);
  EXPECT_EQ(anthropic_finish_reason("max_tokens"), FinishReason::kLength);
  EXPECT_EQ(anthropic_finish_reason("tool_use"), FinishReason::kToolUse);
  EXPECT_EQ(anthropic_finish_reason("refusal"), FinishReason::kContentFilter);
  EXPECT_EQ(anthropic_finish_reason("pause_turn"), FinishReason::kOther);
}

TEST(AnthropicMessagesParse, ErrorEnvelopeAndMissingContentAreShapeErrors) {
  EXPECT_THROW(parse_anthropic_reply(mgk::test::anthropic_error("api_error", "boom")),
               ReplyShapeError);
  EXPECT_THROW(parse_anthropic_reply(json{{"type", "message"}, {"content", "text"}}),
               ReplyShapeError);
  json reply = mgk::test::anthropic_message_reply("x");
  reply["usage"]["output_tokens"] = json::array();
  EXPECT_THROW(parse_anthropic_reply(reply), ReplyShapeError);
}

TEST(AnthropicMessagesParse, NullCacheCountsAreZero) {
  json reply = mgk::test::anthropic_message_reply("x", {.input = 7, .output = 3});
  reply["usage"]["cache_read_input_tokens"] = nullptr;
  reply["usage"]["cache_creation_input_tokens"] = nullptr;
  Reply parsed = parse_anthropic_reply(reply);
  EXPECT_EQ(parsed.usage.input_tokens, 7);
  EXPECT_EQ(parsed.usage.cached_input_tokens, 0);
}

}  // namespace
}  // namespace mgk::llm
