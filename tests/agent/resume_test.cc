// Ctrl-C in the middle of a session, then `--resume`: the conversation continues from what
// the store kept, and the totals add up over both sessions.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "agent/trajectory.h"
#include "agent_fixture.h"
#include "common/error.h"

namespace mgk::agent::testing {
namespace {

const char* kV1 = "// v1\n#include \"mgk/solution.h\"\n";
const char* kV2 = "// v2\n#include \"mgk/solution.h\"\n";
const char* kV3 = "// v3\n#include \"mgk/solution.h\"\n";
const char* kV4 = "// v4\n#include \"mgk/solution.h\"\n";

TEST_F(AgentTest, AnInterruptedAttemptResumesFromItsStoredConversation) {
  // First session: Ctrl-C arrives while turn 2 is being judged.
  server_.push(test::ScriptedResponse::json(200, test::openai_chat_reply(kernel_reply(kV1), {1000, 100})));
  server_.push(test::ScriptedResponse::json(200, test::openai_chat_reply(kernel_reply(kV2), {2000, 200})));
  judge_.push(mismatch_result());
  judge_.push([this](const std::filesystem::path&) {
    interrupt_ = true;
    return correct_result(1.1, 0.9);
  });
  auto p = provider("openai:gpt-test");
  AttemptOutcome first = make_agent(setup(Mode::kRefine, 4), *p).start(new_run());
  EXPECT_EQ(first.reason, ExitReason::kInterrupted);
  EXPECT_EQ(first.turns, 2);
  EXPECT_EQ(server_.request_count(), 2u);
  auto summary = store_.attempt(first.attempt_id);
  EXPECT_EQ(summary->status, store::Status::kInterrupted);
  EXPECT_EQ(summary->exit_reason, "interrupted");
  const nlohmann::json sent_second = server_.requests()[1].json["messages"];

  // Second session, a new process as far as the agent knows.
  interrupt_ = false;
  server_.push(test::ScriptedResponse::json(200, test::openai_chat_reply(kernel_reply(kV3), {3000, 300})));
  server_.push(test::ScriptedResponse::json(200, test::openai_chat_reply(kernel_reply(kV4), {4000, 400})));
  judge_.push(correct_result(1.3, 1.2));
  judge_.push(correct_result(1.25, 1.1));
  AgentSetup s = setup(Mode::kRefine, 4);
  s.prompt = {"A DIFFERENT SYSTEM PROMPT", "A DIFFERENT PROBLEM PROMPT"};  // must not be used
  AttemptOutcome second = make_agent(s, *p).resume(first.attempt_id);

  EXPECT_EQ(second.attempt_id, first.attempt_id);
  EXPECT_EQ(second.reason, ExitReason::kTurnsExhausted);
  EXPECT_EQ(second.turns, 4);
  auto requests = server_.requests();
  ASSERT_EQ(requests.size(), 4u);
  // The resumed request is the interrupted conversation plus turn 2's reply and feedback.
  const nlohmann::json resumed = requests[2].json["messages"];
  ASSERT_EQ(resumed.size(), sent_second.size() + 2);
  for (size_t i = 0; i < sent_second.size(); ++i) EXPECT_EQ(resumed[i], sent_second[i]) << i;
  EXPECT_EQ(resumed[0]["content"], "SYSTEM PROMPT for the test");
  EXPECT_EQ(resumed[sent_second.size()]["role"], "assistant");
  EXPECT_EQ(resumed[sent_second.size()]["content"], kernel_reply(kV2));
  auto turns = store_.turns(first.attempt_id);
  ASSERT_EQ(turns.size(), 4u);
  EXPECT_EQ(resumed.back()["content"], turns[1].feedback);
  EXPECT_NE(turns[1].feedback.find("Turn 2 of 4"), std::string::npos);
  EXPECT_EQ(turns[2].index, 2);
  EXPECT_EQ(turns[2].messages.size(), 1u);  // only turn 1's feedback is new in turn 2

  summary = store_.attempt(first.attempt_id);
  EXPECT_EQ(summary->status, store::Status::kDone);
  EXPECT_EQ(summary->tokens_in, 1000 + 2000 + 3000 + 4000);
  EXPECT_EQ(summary->tokens_out, 100 + 200 + 300 + 400);
  EXPECT_NEAR(second.cost_usd, 0.028, 1e-12);  // 10000 in at $2 + 1000 out at $8 per million
  EXPECT_EQ(summary->best_kernel_hash, store_.put_kernel(kV3));  // slowest size 1.2 beats 1.1
  ASSERT_TRUE(second.best_kernel);
  EXPECT_EQ(read_file(*second.best_kernel), kV3);
}

// Ctrl-C while the kernel is judged: the failure the evaluator saw is stored as the
// infrastructure's (the ranks died of the same SIGINT), the paid turn stays pending, and a
// resume judges that kernel again without asking the model for it.
TEST_F(AgentTest, AFailureSeenAfterCtrlCIsNotBlamedOnTheKernelAndAResumeJudgesItAgain) {
  server_.push(test::ScriptedResponse::json(200, test::openai_chat_reply(kernel_reply(kV1), {1000, 100})));
  judge_.push([this](const std::filesystem::path&) {
    interrupt_ = true;
    results::EvalResult r;
    r.verdict = results::Verdict::kRuntimeError;
    r.message = "rank 0 was killed by signal 2";
    return r;
  });
  auto p = provider("openai:gpt-test");
  AttemptOutcome out = make_agent(setup(Mode::kRefine, 1), *p).start(new_run());
  EXPECT_EQ(out.reason, ExitReason::kInterrupted);
  auto turns = store_.turns(out.attempt_id);
  ASSERT_EQ(turns.size(), 1u);
  EXPECT_EQ(turns[0].action, store::kTurnPending);
  EXPECT_EQ(store_.attempt(out.attempt_id)->tokens_in, 1000) << "the paid reply is counted";
  auto evals = store_.evaluations_of_attempt(out.attempt_id);
  ASSERT_EQ(evals.size(), 1u);
  EXPECT_EQ(evals[0].verdict, "infrastructure");
  EXPECT_EQ(evals[0].message, "the evaluation was interrupted (Ctrl-C) before it finished (it had come to "
                              "runtime_error: rank 0 was killed by signal 2)");

  interrupt_ = false;
  judge_.push(correct_result(1.5, 1.2));
  AttemptOutcome resumed = make_agent(setup(Mode::kRefine, 1), *p).resume(out.attempt_id);
  EXPECT_EQ(resumed.reason, ExitReason::kTurnsExhausted) << resumed.message;
  EXPECT_EQ(server_.request_count(), 1u) << "the model was asked again for a kernel it had given";
  turns = store_.turns(out.attempt_id);
  ASSERT_EQ(turns.size(), 1u);
  EXPECT_EQ(turns[0].action, "kernel");
  EXPECT_NE(turns[0].feedback.find("1.20"), std::string::npos) << turns[0].feedback;
  evals = store_.evaluations_of_attempt(out.attempt_id);
  ASSERT_EQ(evals.size(), 2u);
  EXPECT_EQ(evals[1].verdict, "correct");
  EXPECT_EQ(store_.attempt(out.attempt_id)->tokens_in, 1000) << "nothing more was paid";
  EXPECT_EQ(store_.attempt(out.attempt_id)->best_kernel_hash, store_.put_kernel(kV1));
}

// SIGKILL (the OOM killer, Slurm's KillWait) while a kernel is judged, which takes minutes:
// the reply the provider billed is in the store with its cost, and a resume judges it
// without paying for it again.
TEST_F(AgentTest, AKillWhileTheKernelIsJudgedKeepsThePaidTurnAndAResumeJudgesIt) {
  server_.push(test::ScriptedResponse::json(200, test::openai_chat_reply(kernel_reply(kV1), {100000, 20000})));
  const int64_t run = new_run();
  const pid_t pid = fork();
  if (pid == 0) {
    store::Store store = store::Store::open(home_.path() / "mgk.db");
    ScriptedJudge killer;
    killer.push([](const std::filesystem::path&) -> results::EvalResult {
      ::kill(::getpid(), SIGKILL);
      return {};
    });
    auto p = provider("openai:gpt-test");
    Agent(setup(Mode::kRefine, 1), AgentDeps{p.get(), &killer, &store, &prompts_, &interrupt_}).start(run);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the session was meant to be killed while judging";
  auto turns = store_.turns(1);
  ASSERT_EQ(turns.size(), 1u) << "the paid reply was lost";
  EXPECT_EQ(turns[0].action, store::kTurnPending);
  const double paid = store_.attempt(1)->cost_usd.value();
  EXPECT_GT(paid, 0);

  judge_.push(mismatch_result());
  auto p = provider("openai:gpt-test");
  AttemptOutcome resumed = make_agent(setup(Mode::kRefine, 1), *p).resume(1);
  EXPECT_EQ(resumed.reason, ExitReason::kTurnsExhausted) << resumed.message;
  EXPECT_EQ(server_.request_count(), 1u);
  turns = store_.turns(1);
  ASSERT_EQ(turns.size(), 1u);
  EXPECT_EQ(turns[0].action, "kernel");
  EXPECT_FALSE(turns[0].feedback.empty());
  EXPECT_EQ(store_.attempt(1)->cost_usd, paid);
  EXPECT_EQ(store_.evaluations_of_attempt(1).back().verdict, "incorrect");
}

TEST_F(AgentTest, ASubmittedAttemptCannotBeResumed) {
  server_.push(test::ScriptedResponse::json(200, test::openai_chat_reply(bash_reply("echo MGK_SUBMIT"))));
  auto p = provider("openai:gpt-test");
  AttemptOutcome out = make_agent(setup(Mode::kShell, 3), *p).start(new_run());
  ASSERT_EQ(out.reason, ExitReason::kSubmitted);
  EXPECT_THROW(make_agent(setup(Mode::kShell, 3), *p).resume(out.attempt_id), UsageError);
  EXPECT_THROW(make_agent(setup(Mode::kShell, 3), *p).resume(out.attempt_id + 100), NotFoundError);
}

// generate --resume and Agent::resume ask the same function, before anything is built.
TEST_F(AgentTest, TheResumeChecksSayWhichFlagDoesNotMatch) {
  server_.push(test::ScriptedResponse::json(200, test::openai_chat_reply("no code block here")));
  auto p = provider("openai:gpt-test");
  AttemptOutcome out = make_agent(setup(Mode::kRefine, 1), *p).start(new_run());
  ASSERT_EQ(out.reason, ExitReason::kTurnsExhausted);
  const store::AttemptSummary s = resumable_attempt(store_, out.attempt_id, {"", "openai:gpt-test", Mode::kRefine});
  EXPECT_EQ(s.id, out.attempt_id);
  try {
    resumable_attempt(store_, out.attempt_id, {"collectives/other", "", std::nullopt});
    FAIL() << "another problem was accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("leave --problem and --model out to resume it"), std::string::npos) << e.what();
  }
  EXPECT_THROW(resumable_attempt(store_, out.attempt_id, {"", "anthropic:other", std::nullopt}), UsageError);
  EXPECT_THROW(resumable_attempt(store_, out.attempt_id, {"", "", Mode::kShell}), UsageError);
  try {
    resumable_attempt(store_, out.attempt_id + 100, {});
    FAIL() << "a missing attempt was found";
  } catch (const NotFoundError& e) {
    EXPECT_NE(std::string(e.what()).find("('mgk history' lists them)"), std::string::npos) << e.what();
  }
}

TEST_F(AgentTest, CtrlCDuringAModelCallEndsItAtOnceAndResumeAsksAgain) {
  server_.push(test::ScriptedResponse::hang());
  auto p = provider("openai:gpt-test");
  std::thread ctrl_c([this] {
    while (server_.request_count() < 1) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the call is waiting on the model
    interrupt_ = true;
  });
  auto started = std::chrono::steady_clock::now();
  AttemptOutcome first = make_agent(setup(Mode::kRefine, 2), *p).start(new_run());
  ctrl_c.join();
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5));
  EXPECT_EQ(first.reason, ExitReason::kInterrupted);
  EXPECT_EQ(first.turns, 0);  // nothing came back: no turn
  EXPECT_EQ(store_.attempt(first.attempt_id)->status, store::Status::kInterrupted);

  // An attempt with no turns resumes from its opening prompt.
  interrupt_ = false;
  server_.push(test::ScriptedResponse::json(200, test::openai_chat_reply(kernel_reply(kV1))));
  server_.push(test::ScriptedResponse::json(200, test::openai_chat_reply(kernel_reply(kV2))));
  judge_.push(mismatch_result());
  judge_.push(correct_result(1.2, 1.1));
  AttemptOutcome second = make_agent(setup(Mode::kRefine, 2), *p).resume(first.attempt_id);
  EXPECT_EQ(second.reason, ExitReason::kTurnsExhausted);
  EXPECT_EQ(second.turns, 2);
  auto requests = server_.requests();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(requests[1].json["messages"], requests[0].json["messages"]);  // the same request
  auto turns = store_.turns(first.attempt_id);
  ASSERT_EQ(turns.size(), 2u);
  EXPECT_EQ(turns[0].messages[0]["content"], "SYSTEM PROMPT for the test");
}

TEST_F(AgentTest, AShellAttemptInterruptedDuringACommandResumesInShellMode) {
  server_.push(test::ScriptedResponse::json(200, test::openai_chat_reply(bash_reply("echo one > a.txt"))));
  server_.push(test::ScriptedResponse::json(200, test::openai_chat_reply(bash_reply("sleep 30"))));
  auto p = provider("openai:gpt-test");
  std::thread ctrl_c([this] {
    while (server_.request_count() < 2) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the command is running
    interrupt_ = true;
  });
  auto started = std::chrono::steady_clock::now();
  AttemptOutcome first = make_agent(setup(Mode::kShell, 5), *p).start(new_run());
  ctrl_c.join();
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(20));
  EXPECT_EQ(first.reason, ExitReason::kInterrupted);
  EXPECT_EQ(first.turns, 2);
  EXPECT_FALSE(first.final_result);  // Ctrl-C: kernel.cu is not judged
  auto turns = store_.turns(first.attempt_id);
  ASSERT_EQ(turns.size(), 2u);
  EXPECT_NE(turns[1].feedback.find("cancelled (interrupted"), std::string::npos) << turns[1].feedback;

  // A refine session cannot take it over; a shell session continues it, in the same sandbox.
  interrupt_ = false;
  EXPECT_THROW(make_agent(setup(Mode::kRefine, 5), *p).resume(first.attempt_id), UsageError);
  server_.push(test::ScriptedResponse::json(200, test::openai_chat_reply(bash_reply("cat a.txt"))));
  server_.push(test::ScriptedResponse::json(200, test::openai_chat_reply(bash_reply("echo MGK_SUBMIT"))));
  AttemptOutcome second = make_agent(setup(Mode::kShell, 5), *p).resume(first.attempt_id);
  EXPECT_EQ(second.reason, ExitReason::kSubmitted);
  EXPECT_EQ(second.turns, 4);
  EXPECT_EQ(second.sandbox_dir, first.sandbox_dir);
  auto requests = server_.requests();
  ASSERT_EQ(requests.size(), 4u);
  std::string observation = requests[3].json["messages"].back()["content"];
  EXPECT_NE(observation.find("exit 0"), std::string::npos) << observation;
  EXPECT_NE(observation.find("one"), std::string::npos) << observation;
  EXPECT_EQ(requests[2].json["messages"].back()["content"], turns[1].feedback);
}

TEST(Trajectory, RebuildsTheConversationFromStoredTurns) {
  std::vector<store::TurnRecord> turns(2);
  turns[0].attempt_id = turns[1].attempt_id = 7;
  turns[0].index = 0;
  turns[0].messages = new_messages_json("SYS", {{"user", "problem"}});
  turns[0].reply = "r1";
  turns[0].feedback = "fb1";
  turns[1].index = 1;
  turns[1].messages = new_messages_json("", {{"user", "fb1"}});
  turns[1].reply = "r2";
  turns[1].feedback = "fb2";
  Conversation c = rebuild_conversation(turns);
  EXPECT_EQ(c.system, "SYS");
  std::vector<std::string> flat;
  for (const auto& m : c.messages) flat.push_back(m.role + ":" + m.content);
  EXPECT_EQ(flat, (std::vector<std::string>{"user:problem", "assistant:r1", "user:fb1", "assistant:r2",
                                            "user:fb2"}));
  turns[1].index = 2;
  EXPECT_THROW(rebuild_conversation(turns), Error);
}

}  // namespace
}  // namespace mgk::agent::testing
