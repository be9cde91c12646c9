// When what the agent leans on fails: the evaluator (an infrastructure verdict, or a judge
// that throws) and the store. Neither may be blamed on the model's kernel, nor cost another
// model call, nor lose the turn that was paid for.
#include <gtest/gtest.h>

#include "agent_fixture.h"
#include "common/error.h"
#include "common/text.h"
#include "store/database.h"

namespace mgk::agent::testing {
namespace {

const char* kKernel = "// one-shot pull\n#include \"mgk/solution.h\"\n";

results::EvalResult infrastructure_result() {
  results::EvalResult r;
  r.verdict = results::Verdict::kInfrastructure;
  r.message = "the reference failed on rank 1: NCCL error 'unhandled system error'";
  return r;
}

// A reply with no text (Anthropic's end_turn with no text block, a refusal, all reasoning)
// is a format error fed back; the history sent next holds "(empty reply)", because
// Anthropic answers an empty assistant message with a 400 that ends the session.
TEST_F(AgentTest, AnEmptyReplyIsAFormatErrorAndNeverAnEmptyMessageSentBack) {
  nlohmann::json empty = test::anthropic_message_reply("", {100, 0}, "end_turn");
  empty["content"] = nlohmann::json::array();
  server_.push(test::ScriptedResponse::json(200, empty));
  server_.push(test::ScriptedResponse::json(200, test::anthropic_message_reply(kernel_reply(kKernel))));
  judge_.push(compile_error_result("error: expected ';'"));
  auto p = provider("anthropic:claude-test");
  AttemptOutcome out = make_agent(setup(Mode::kRefine, 2), *p).start(new_run());
  EXPECT_EQ(out.reason, ExitReason::kTurnsExhausted) << out.message;
  const auto reqs = server_.requests();
  ASSERT_EQ(reqs.size(), 2u);
  const auto& messages = reqs[1].json["messages"];
  ASSERT_GE(messages.size(), 2u) << messages.dump();
  EXPECT_EQ(messages[1]["role"], "assistant");
  EXPECT_EQ(messages[1]["content"], "(empty reply)") << messages.dump();
  EXPECT_EQ(store_.turns(out.attempt_id)[0].action, "format_error");
  EXPECT_EQ(store_.turns(out.attempt_id)[0].reply, "") << "the store keeps the reply as it came";
}

// gcc quotes with ‘ ’: a compile log cut at a byte count inside one left invalid UTF-8 in the
// feedback, and every request after it (a resume's too) failed to be written as JSON.
TEST_F(AgentTest, ACompileLogWithMultibyteCharactersAtTheCutTravelsAsValidJson) {
  server_.push(test::ScriptedResponse::json(200, test::openai_chat_reply(kernel_reply(kKernel))));
  server_.push(test::ScriptedResponse::json(200, test::openai_chat_reply(kernel_reply(kKernel))));
  judge_.push(compile_error_result(std::string(3999, 'a') + "\xE2\x80\x98" + std::string(6000, 'b') + "\xE2\x80\x99"));
  judge_.push(compile_error_result("error: expected ';'"));
  auto p = provider("openai:gpt-test");
  AttemptOutcome out = make_agent(setup(Mode::kRefine, 2), *p).start(new_run());
  EXPECT_EQ(out.reason, ExitReason::kTurnsExhausted) << out.message;
  EXPECT_EQ(server_.request_count(), 2u);
  const std::string feedback = store_.turns(out.attempt_id)[0].feedback;
  EXPECT_EQ(feedback, to_valid_utf8(feedback));
  EXPECT_NE(feedback.find("characters cut"), std::string::npos) << "the log was meant to be cut";
}

TEST_F(AgentTest, AnInfrastructureVerdictEndsTheSessionWithoutAnotherCall) {
  server_.push(test::ScriptedResponse::json(200, test::openai_chat_reply(kernel_reply(kKernel))));
  judge_.push(infrastructure_result());
  auto p = provider("openai:gpt-test");
  AttemptOutcome out = make_agent(setup(Mode::kRefine, 4), *p).start(new_run());

  EXPECT_EQ(out.reason, ExitReason::kInfrastructure);
  EXPECT_EQ(out.message,
            "the evaluator failed: the reference failed on rank 1: NCCL error 'unhandled system error'");
  EXPECT_EQ(out.turns, 1);
  EXPECT_EQ(server_.request_count(), 1u);  // the model was not asked for its kernel again
  auto summary = store_.attempt(out.attempt_id);
  EXPECT_EQ(summary->status, store::Status::kFailed);
  EXPECT_EQ(summary->exit_reason, "infrastructure");
  // The paid-for turn is kept, with the feedback a resumed session would send.
  auto turns = store_.turns(out.attempt_id);
  ASSERT_EQ(turns.size(), 1u);
  EXPECT_EQ(turns[0].action, "kernel");
  EXPECT_NE(turns[0].feedback.find("says\nnothing about your kernel"), std::string::npos) << turns[0].feedback;
  EXPECT_EQ(store_.evaluations_of_attempt(out.attempt_id)[0].verdict, "infrastructure");
}

TEST_F(AgentTest, AJudgeThatThrowsIsAnInfrastructureFailureAndTheTurnIsKept) {
  server_.push(test::ScriptedResponse::json(200, test::openai_chat_reply(kernel_reply(kKernel), {1000, 100})));
  judge_.push([](const std::filesystem::path&) -> results::EvalResult {
    throw Error("cannot start mgk-harness: No such file or directory");
  });
  auto p = provider("openai:gpt-test");
  AttemptOutcome out = make_agent(setup(Mode::kRefine, 4), *p).start(new_run());

  EXPECT_EQ(out.reason, ExitReason::kInfrastructure);
  EXPECT_EQ(out.message, "the evaluator failed: cannot start mgk-harness: No such file or directory");
  EXPECT_EQ(server_.request_count(), 1u);
  auto turns = store_.turns(out.attempt_id);
  ASSERT_EQ(turns.size(), 1u);
  EXPECT_EQ(turns[0].tokens_in, 1000);
  auto evals = store_.evaluations_of_attempt(out.attempt_id);
  ASSERT_EQ(evals.size(), 1u);
  EXPECT_EQ(evals[0].verdict, "infrastructure");
  EXPECT_EQ(evals[0].problem, "collectives/all_reduce");
  EXPECT_EQ(evals[0].message, "cannot start mgk-harness: No such file or directory");
}

TEST_F(AgentTest, AStoreThatFailsMidSessionMarksTheAttemptFailedAndSaysWhere) {
  server_.push(test::ScriptedResponse::json(200, test::openai_chat_reply(kernel_reply(kKernel))));
  judge_.push([this](const std::filesystem::path&) {
    // While the kernel is judged the store starts refusing to write turns (as a full disk
    // would): the pending turn cannot be completed.
    store::Database db = store::Database::open(home_.path() / "mgk.db");
    db.exec("CREATE TRIGGER refuse BEFORE UPDATE ON turns BEGIN SELECT RAISE(ABORT, 'disk full'); END");
    return correct_result(1.5, 1.2);
  });
  auto p = provider("openai:gpt-test");
  Agent agent = make_agent(setup(Mode::kRefine, 4), *p);
  int64_t run = new_run();
  try {
    agent.start(run);
    FAIL() << "the store's failure should reach the caller";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("disk full"), std::string::npos) << e.what();
    ASSERT_FALSE(e.context().empty());
    EXPECT_EQ(e.context().back(), "in attempt 1 (collectives/all_reduce)");
  }
  auto summary = store_.attempt(1);
  ASSERT_TRUE(summary);
  EXPECT_EQ(summary->status, store::Status::kFailed);
  EXPECT_EQ(summary->exit_reason, "error");
}

TEST_F(AgentTest, AnInfrastructureFailureJudgingTheFinalKernelEndsAShellSessionAsSuch) {
  server_.push(test::ScriptedResponse::json(
      200, test::openai_chat_reply(bash_reply(std::string("printf '%s' '") + kKernel + "' > kernel.cu"))));
  server_.push(test::ScriptedResponse::json(200, test::openai_chat_reply(bash_reply("echo MGK_SUBMIT"))));
  judge_.push(infrastructure_result());
  auto p = provider("openai:gpt-test");
  AttemptOutcome out = make_agent(setup(Mode::kShell, 5), *p).start(new_run());
  EXPECT_EQ(out.reason, ExitReason::kInfrastructure);
  EXPECT_NE(out.message.find("the evaluator failed on the final kernel.cu: the reference failed"),
            std::string::npos)
      << out.message;
  EXPECT_EQ(store_.attempt(out.attempt_id)->exit_reason, "infrastructure");
}

}  // namespace
}  // namespace mgk::agent::testing
