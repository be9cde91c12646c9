// A mini-swe-agent style session: commands run in the sandbox, their output is observed,
// and the model submits kernel.cu with the sentinel.
#include <gtest/gtest.h>

#include <fstream>

#include "agent_fixture.h"

namespace mgk::agent::testing {
namespace {

const char* kKernel = "// final: one-shot pull\n#include \"mgk/solution.h\"\n";

TEST_F(AgentTest, AShellSessionRunsCommandsAndSubmits) {
  const std::string write_kernel = std::string("cat > kernel.cu <<'EOF_KERNEL'\n") + kKernel + "EOF_KERNEL";
  for (const std::string& command :
       {std::string("ls"), std::string("env | grep -c _KEY; env | grep -ci secret; echo HOME=$HOME"),
        write_kernel, std::string("head -n 1 kernel.cu && exit 3"), std::string("echo MGK_SUBMIT")})
    server_.push(test::ScriptedResponse::json(200, test::openai_chat_reply(bash_reply(command), {100, 20})));
  judge_.push(correct_result(1.7, 1.4));

  AgentSetup s = setup(Mode::kShell, 10);
  s.sandbox_files = {{"reference.cu", "// the reference\n"}, {"problem.md", "# the problem\n"}};
  auto p = provider("openai:gpt-test");
  AttemptOutcome out = make_agent(s, *p).start(new_run());

  EXPECT_EQ(out.reason, ExitReason::kSubmitted);
  EXPECT_EQ(out.turns, 5);
  ASSERT_EQ(judge_.judged_files.size(), 1u);
  EXPECT_EQ(judge_.judged_files[0], out.sandbox_dir / "kernel.cu");
  EXPECT_EQ(judge_.judged_sources[0], kKernel);
  ASSERT_TRUE(out.final_result);
  EXPECT_EQ(out.final_result->verdict, results::Verdict::kCorrect);
  ASSERT_TRUE(out.best_kernel);
  EXPECT_EQ(read_file(*out.best_kernel), kKernel);

  auto requests = server_.requests();
  ASSERT_EQ(requests.size(), 5u);
  auto observation = [&](size_t i) {
    return requests[i].json["messages"].back()["content"].get<std::string>();
  };
  EXPECT_NE(observation(1).find("exit 0"), std::string::npos) << observation(1);
  EXPECT_NE(observation(1).find("problem.md\nreference.cu"), std::string::npos) << observation(1);
  // No variable ending in _KEY, nothing secret, HOME is the sandbox (shown as ".": the
  // model reads no host path).
  EXPECT_NE(observation(2).find("0\n0\nHOME=.\n"), std::string::npos) << observation(2);
  EXPECT_NE(observation(4).find("exit 3"), std::string::npos) << observation(4);
  EXPECT_NE(observation(4).find("// final: one-shot pull"), std::string::npos);
  for (const auto& r : requests) EXPECT_EQ(r.body.find(kOpenAIKey), std::string::npos);

  auto turns = store_.turns(out.attempt_id);
  ASSERT_EQ(turns.size(), 5u);
  EXPECT_EQ(turns[0].action, "shell");
  EXPECT_EQ(turns[4].action, "submit");
  EXPECT_EQ(turns[4].feedback, "");
  auto summary = store_.attempt(out.attempt_id);
  EXPECT_EQ(summary->exit_reason, "submitted");
  EXPECT_EQ(summary->mode, "shell");
  EXPECT_EQ(summary->best_kernel_hash, store_.put_kernel(kKernel));
  auto evals = store_.evaluations_of_attempt(out.attempt_id);
  ASSERT_EQ(evals.size(), 1u);
  EXPECT_EQ(evals[0].turn_index, 4);
}

// The problem's and the primitives' folders are links in the sandbox, and what a command
// prints reaches the model without host paths: the same conversation on every machine.
TEST_F(AgentTest, AShellSessionReadsTheProblemThroughLinksAndSeesNoHostPath) {
  test::TempDir problem_dir{"mgk-shell-problem"};
  std::ofstream(problem_dir.path() / "statement.md") << "STATEMENT OF THE PROBLEM\n";
  server_.push(test::ScriptedResponse::json(
      200, test::openai_chat_reply(bash_reply("pwd; cat problem/statement.md; ls primitives/README.md; "
                                              "readlink -f primitives/README.md; echo \"in $PWD\""))));
  server_.push(test::ScriptedResponse::json(200, test::openai_chat_reply(bash_reply("echo MGK_SUBMIT"))));
  AgentSetup s = setup(Mode::kShell, 5);
  s.sandbox_links = {{"problem", problem_dir.path()}, {"primitives", root_dir() / "primitives"}};
  auto p = provider("openai:gpt-test");
  AttemptOutcome out = make_agent(s, *p).start(new_run());
  EXPECT_EQ(out.reason, ExitReason::kSubmitted);
  EXPECT_TRUE(std::filesystem::is_symlink(out.sandbox_dir / "problem"));
  const std::string observation = server_.requests()[1].json["messages"].back()["content"];
  EXPECT_NE(observation.find("STATEMENT OF THE PROBLEM"), std::string::npos) << observation;
  // The link as the model named it; its target as an include path (compile errors name
  // primitives headers so).
  EXPECT_NE(observation.find(".\nSTATEMENT OF THE PROBLEM\nprimitives/README.md\nREADME.md\nin .\n"), std::string::npos)
      << observation;
  for (const std::filesystem::path& host : {std::filesystem::canonical(out.sandbox_dir), root_dir()})
    EXPECT_EQ(observation.find(host.string()), std::string::npos) << host << "\n" << observation;
}

TEST_F(AgentTest, ACommandThatHangsIsKilledAndTheModelToldSo) {
  server_.push(test::ScriptedResponse::json(200, test::openai_chat_reply(bash_reply("echo begun; sleep 60"))));
  server_.push(test::ScriptedResponse::json(200, test::openai_chat_reply(bash_reply("echo MGK_SUBMIT"))));
  AgentSetup s = setup(Mode::kShell, 5);
  s.command_timeout_s = 1;
  auto p = provider("openai:gpt-test");
  AttemptOutcome out = make_agent(s, *p).start(new_run());
  EXPECT_EQ(out.reason, ExitReason::kSubmitted);
  EXPECT_FALSE(out.final_result);  // no kernel.cu was written: nothing to judge
  EXPECT_FALSE(out.best_kernel);
  std::string observation = server_.requests()[1].json["messages"].back()["content"];
  EXPECT_NE(observation.find("timed out after 1 s"), std::string::npos) << observation;
  EXPECT_NE(observation.find("begun"), std::string::npos) << observation;
}

TEST_F(AgentTest, WithoutASubmissionTheStepLimitEndsTheSessionAndKernelCuIsJudged) {
  server_.push(test::ScriptedResponse::json(
      200, test::openai_chat_reply(bash_reply(std::string("printf '%s' '") + kKernel + "' > kernel.cu"))));
  server_.push(test::ScriptedResponse::json(200, test::openai_chat_reply(bash_reply("true"))));
  judge_.push(mismatch_result());
  auto p = provider("openai:gpt-test");
  AttemptOutcome out = make_agent(setup(Mode::kShell, 2), *p).start(new_run());
  EXPECT_EQ(out.reason, ExitReason::kTurnsExhausted);
  ASSERT_TRUE(out.final_result);
  EXPECT_EQ(out.final_result->verdict, results::Verdict::kIncorrect);
  EXPECT_FALSE(out.best_kernel);
  std::string last = server_.requests()[1].json["messages"].back()["content"];
  EXPECT_NE(last.find("your next command is your last"), std::string::npos) << last;
}

}  // namespace
}  // namespace mgk::agent::testing
