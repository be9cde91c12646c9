// How sessions end: format errors in a row, truncated replies, cost, time, API errors.
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "agent_fixture.h"
#include "common/error.h"

namespace mgk::agent::testing {
namespace {

const char* kKernel = "#include \"mgk/solution.h\"\n";

TEST_F(AgentTest, ThreeUnusableRepliesInARowEndTheAttempt) {
  for (const char* text : {"Let me think about it.", "```python\nprint(1)\n```", "```cuda\na\n```\n```cuda\nb\n```"})
    server_.push(test::ScriptedResponse::json(200, test::openai_chat_reply(text)));
  auto p = provider("openai:gpt-test");
  AttemptOutcome out = make_agent(setup(Mode::kRefine, 8), *p).start(new_run());
  EXPECT_EQ(out.reason, ExitReason::kFormatErrors);
  EXPECT_EQ(out.turns, 3);
  EXPECT_EQ(judge_.judged_files.size(), 0u);
  auto requests = server_.requests();
  ASSERT_EQ(requests.size(), 3u);
  std::string fb = requests[1].json["messages"].back()["content"];
  EXPECT_NE(fb.find("Your reply could not be used: it holds no fenced code block."), std::string::npos) << fb;
  EXPECT_NE(fb.find("exactly one fenced code block tagged `cuda`"), std::string::npos) << fb;
  fb = requests[2].json["messages"].back()["content"];
  EXPECT_NE(fb.find("no code block tagged cuda (found: ```python)"), std::string::npos) << fb;
  auto summary = store_.attempt(out.attempt_id);
  EXPECT_EQ(summary->exit_reason, "format_errors");
  EXPECT_EQ(store_.turns(out.attempt_id)[2].action, "format_error");
}

TEST_F(AgentTest, AUsableReplyResetsTheFormatErrorCount) {
  server_.push(test::ScriptedResponse::json(200, test::openai_chat_reply("no code")));
  server_.push(test::ScriptedResponse::json(200, test::openai_chat_reply("no code")));
  server_.push(test::ScriptedResponse::json(200, test::openai_chat_reply(kernel_reply(kKernel))));
  server_.push(test::ScriptedResponse::json(200, test::openai_chat_reply("no code")));
  server_.push(test::ScriptedResponse::json(200, test::openai_chat_reply("no code")));
  judge_.push(mismatch_result());
  auto p = provider("openai:gpt-test");
  AttemptOutcome out = make_agent(setup(Mode::kRefine, 5), *p).start(new_run());
  EXPECT_EQ(out.reason, ExitReason::kTurnsExhausted);
  EXPECT_EQ(out.turns, 5);
}

TEST_F(AgentTest, ATruncatedReplyGetsItsOwnMessage) {
  server_.push(test::ScriptedResponse::json(
      200, test::openai_chat_reply("```cuda\n#include \"mgk/solution.h\"\n// and then", {100, 4096}, "length")));
  server_.push(test::ScriptedResponse::json(200, test::openai_chat_reply(kernel_reply(kKernel))));
  judge_.push(correct_result(1.1, 1.05));
  auto p = provider("openai:gpt-test");
  AttemptOutcome out = make_agent(setup(Mode::kRefine, 2), *p).start(new_run());
  EXPECT_EQ(out.reason, ExitReason::kTurnsExhausted);
  EXPECT_EQ(judge_.judged_files.size(), 1u);
  std::string fb = server_.requests()[1].json["messages"].back()["content"];
  EXPECT_NE(fb.find("Your reply was cut off: it reached the limit of 4096 output tokens"), std::string::npos)
      << fb;
  auto turns = store_.turns(out.attempt_id);
  EXPECT_EQ(turns[0].action, "truncated");
  EXPECT_EQ(turns[0].finish_reason, "length");
}

TEST_F(AgentTest, TheCostLimitStopsBeforeACallThatCouldCrossIt) {
  // Each reply costs (1000 * 2 + 1000 * 8) / 1e6 = $0.01; the next call's worst case is
  // max tokens (1000) at $8 per million plus the conversation at $2: above $0.008, so the
  // agent stops once less than that is left of the limit, never after crossing it.
  server_.respond_with([](const test::RecordedRequest&) {  // as many as it asks for
    return test::ScriptedResponse::json(200, test::openai_chat_reply("thinking", {1000, 1000}));
  });
  AgentSetup s = setup(Mode::kRefine, 10);
  s.limits.max_cost_usd = 0.035;
  s.limits.max_format_errors = 100;
  s.sampling.max_tokens = 1000;
  auto p = provider("openai:gpt-test");
  AttemptOutcome out = make_agent(s, *p).start(new_run());
  EXPECT_EQ(out.reason, ExitReason::kCostLimit);
  auto summary = store_.attempt(out.attempt_id);
  EXPECT_EQ(summary->exit_reason, "cost_limit");
  EXPECT_LE(summary->cost_usd, 0.035) << "the limit is never crossed";
  EXPECT_GE(out.turns, 1);
  EXPECT_LE(out.turns, 3);
  EXPECT_EQ(server_.request_count(), size_t(out.turns));
  EXPECT_EQ(summary->tokens_in, 1000 * out.turns);
}

// A $3 limit once let a session spend $4.26: the check looked at what was spent, not at
// what the next call could cost. A call whose worst case alone exceeds the limit is not made.
TEST_F(AgentTest, ACallWhoseWorstCaseExceedsTheLimitIsNotMade) {
  server_.respond_with([](const test::RecordedRequest&) {
    return test::ScriptedResponse::json(200, test::openai_chat_reply("thinking", {1000, 1000}));
  });
  AgentSetup s = setup(Mode::kRefine, 10);
  s.limits.max_cost_usd = 0.1;  // below 16384 output tokens at $8 per million ($0.13)
  s.sampling.max_tokens = 16384;
  auto p = provider("openai:gpt-test");
  AttemptOutcome out = make_agent(s, *p).start(new_run());
  EXPECT_EQ(out.reason, ExitReason::kCostLimit);
  EXPECT_EQ(out.turns, 0);
  EXPECT_EQ(server_.request_count(), 0u);
}


TEST_F(AgentTest, TheTimeLimitStopsBeforeTheNextCall) {
  server_.push(test::ScriptedResponse::json(200, test::openai_chat_reply(kernel_reply(kKernel))));
  judge_.push([](const std::filesystem::path&) {
    std::this_thread::sleep_for(std::chrono::milliseconds(600));
    return mismatch_result();
  });
  AgentSetup s = setup(Mode::kRefine, 10);
  s.limits.max_seconds = 0.5;
  auto p = provider("openai:gpt-test");
  AttemptOutcome out = make_agent(s, *p).start(new_run());
  EXPECT_EQ(out.reason, ExitReason::kTimeLimit);
  EXPECT_EQ(out.turns, 1);
}

TEST_F(AgentTest, AnApiErrorEndsTheAttemptWithTheProvidersMessage) {
  server_.push(test::ScriptedResponse::json(401, test::openai_error("invalid_request_error", "Incorrect API key")));
  auto p = provider("openai:gpt-test");
  AttemptOutcome out = make_agent(setup(Mode::kRefine, 3), *p).start(new_run());
  EXPECT_EQ(out.reason, ExitReason::kApiError);
  EXPECT_NE(out.message.find("401"), std::string::npos) << out.message;
  EXPECT_EQ(out.message.find(kOpenAIKey), std::string::npos);
  EXPECT_EQ(out.turns, 0);
  auto summary = store_.attempt(out.attempt_id);
  EXPECT_EQ(summary->status, store::Status::kFailed);
  EXPECT_EQ(summary->exit_reason, "api_error");
}

TEST_F(AgentTest, AModelWithoutAPriceRefusesACostLimitButRunsWithout) {
  auto p = provider("openai:gpt-unpriced");
  ASSERT_FALSE(p->price());
  AgentSetup limited = setup(Mode::kRefine, 1);
  limited.limits.max_cost_usd = 3;
  try {
    make_agent(limited, *p);
    FAIL() << "a cost limit on an unpriced model should be refused";
  } catch (const UsageError& e) {
    std::string m = e.what();
    EXPECT_EQ(m.find("no price is known for openai:gpt-unpriced, so a cost limit (--max-cost $3) cannot be "
                     "enforced: give its price in "),
              0u)
        << m;
    EXPECT_NE(m.find("\"prices\": {\"openai:gpt-unpriced\": {\"input\": USD_PER_MTOK"), std::string::npos) << m;
    EXPECT_NE(m.find("or pass --max-cost 0 for no cost limit"), std::string::npos) << m;
  }
  EXPECT_EQ(server_.request_count(), 0u);

  server_.push(test::ScriptedResponse::json(200, test::openai_chat_reply("thinking", {1000, 1000})));
  AgentSetup unlimited = setup(Mode::kRefine, 1);
  unlimited.limits.max_cost_usd = 0;
  AttemptOutcome out = make_agent(unlimited, *p).start(new_run());
  EXPECT_EQ(out.reason, ExitReason::kTurnsExhausted);
  EXPECT_EQ(out.cost_usd, 0);  // unknown, and counted as nothing
}

TEST_F(AgentTest, TheCostLimitStopsAShellSessionBeforeTheNextCommand) {
  for (int i = 0; i < 2; ++i)  // $0.01 each; the next call's worst case is above $0.008
    server_.push(test::ScriptedResponse::json(200, test::openai_chat_reply(bash_reply("true"), {1000, 1000})));
  AgentSetup s = setup(Mode::kShell, 10);
  s.limits.max_cost_usd = 0.025;
  s.sampling.max_tokens = 1000;
  auto p = provider("openai:gpt-test");
  AttemptOutcome out = make_agent(s, *p).start(new_run());
  EXPECT_EQ(out.reason, ExitReason::kCostLimit);
  EXPECT_EQ(out.turns, 2) << "after two, a third call could cross $0.025: 0.02 + 1000 tokens at $8";
  EXPECT_EQ(server_.request_count(), size_t(out.turns));
}

TEST_F(AgentTest, TheTimeLimitStopsAShellSessionBeforeTheNextCommand) {
  server_.push(test::ScriptedResponse::json(200, test::openai_chat_reply(bash_reply("sleep 0.6"))));
  AgentSetup s = setup(Mode::kShell, 10);
  s.limits.max_seconds = 0.5;
  auto p = provider("openai:gpt-test");
  AttemptOutcome out = make_agent(s, *p).start(new_run());
  EXPECT_EQ(out.reason, ExitReason::kTimeLimit);
  EXPECT_EQ(out.turns, 1);
  EXPECT_EQ(store_.attempt(out.attempt_id)->exit_reason, "time_limit");
}

}  // namespace
}  // namespace mgk::agent::testing
