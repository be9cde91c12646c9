// What `mgk bench` needs of a session: the sample stored with the attempt, a stop flag that
// ends the session before its next model call (the run's budget), and on ranks sharing a
// GPU the first correct kernel kept as the best, with the model told nothing was timed.
#include <gtest/gtest.h>

#include "agent/session_setup.h"
#include "agent_fixture.h"
#include "problems/catalog.h"

namespace mgk::agent::testing {
namespace {

results::EvalResult untimed_correct() {
  results::EvalResult r;
  r.verdict = results::Verdict::kCorrect;
  r.message = "correct at 1 size(s); not timed: ranks share a GPU";
  r.gpus = {0, 0};
  results::SizeResult s;
  s.size = "small";
  s.correct = true;
  s.trials_passed = 3;
  r.sizes.push_back(s);
  return r;
}

TEST_F(AgentTest, OnRanksSharingAGpuTheFirstCorrectKernelIsKeptAndTheModelIsToldNothingWasTimed) {
  for (const char* k : {"// first correct\n", "// second correct\n"})
    server_.push(test::ScriptedResponse::json(200, test::openai_chat_reply(kernel_reply(k))));
  judge_.push(untimed_correct());
  judge_.push(untimed_correct());
  auto p = provider("openai:gpt-test");
  AgentSetup s = setup(Mode::kRefine, 2);
  s.sample = 3;
  Agent agent = make_agent(s, *p);
  AttemptOutcome out = agent.start(new_run());
  ASSERT_TRUE(out.best_kernel);
  EXPECT_EQ(read_file(*out.best_kernel), "// first correct\n");
  EXPECT_FALSE(out.best_speedup) << "no speedup where nothing was timed";
  auto requests = server_.requests();
  ASSERT_EQ(requests.size(), 2u);
  const std::string feedback = requests[1].json["messages"].back()["content"];
  EXPECT_NE(feedback.find("share one GPU here"), std::string::npos) << feedback;
  auto stored = store_.attempt(out.attempt_id);
  EXPECT_EQ(stored->sample, 3);
  EXPECT_EQ(stored->best_kernel_hash, store_.put_kernel("// first correct\n"));
  EXPECT_FALSE(stored->best_speedup);
}

TEST_F(AgentTest, TheStopFlagEndsTheSessionBeforeItsNextCallAsInterrupted) {
  server_.push(test::ScriptedResponse::json(200, test::openai_chat_reply(kernel_reply("// k\n"))));
  std::atomic<bool> stop{false};
  judge_.push([&](const std::filesystem::path&) {
    stop = true;  // the run's budget ran out while this kernel was judged
    return mismatch_result();
  });
  auto p = provider("openai:gpt-test");
  Agent agent(setup(Mode::kRefine, 5), {p.get(), &judge_, &store_, &prompts_, &interrupt_, &stop});
  AttemptOutcome out = agent.start(new_run());
  EXPECT_EQ(out.reason, ExitReason::kInterrupted);
  EXPECT_EQ(out.turns, 1);
  EXPECT_EQ(server_.request_count(), 1u);
  EXPECT_EQ(store_.attempt(out.attempt_id)->status, store::Status::kInterrupted);
  EXPECT_EQ(agent.attempt_id(), out.attempt_id);
}

TEST(SessionSetup, BuildsTheOpeningAndTheStoredConfigFromTheChoices) {
  const PromptLibrary prompts = PromptLibrary::load(root_dir() / "prompts");
  const problems::Spec spec = problems::load("collectives/all_reduce");
  SessionChoices c;
  c.mode = Mode::kShell;
  c.world_size = 4;
  c.limits = {12, 1.5, 0, 3};
  c.shell_gpus = "0,0,0,0";
  c.compile_only = true;
  c.gpus = {0, 0, 0, 0};
  eval::MachineInfo none;  // no GPU visible
  c.topology = topology_of(none, 4, std::nullopt);
  AgentSetup s = build_session_setup(prompts, spec, c);
  EXPECT_EQ(s.problem, "collectives/all_reduce");
  EXPECT_NE(s.prompt.system.find("mgk eval collectives/all_reduce kernel.cu --world 4 --gpus 0,0,0,0 --compile-only"),
            std::string::npos);
  EXPECT_NE(s.prompt.system.find("4 ranks, one per GPU: unknown GPU"), std::string::npos) << "not the probe's 'none'";
  EXPECT_NE(s.prompt.user.find("# Problem: collectives/all_reduce"), std::string::npos);
  EXPECT_EQ(s.sandbox_files.count("reference.cu"), 1u);
  // The problem's folder and the primitives are links in the sandbox: the prompt names no
  // host path, and is the same on every machine.
  EXPECT_NE(s.prompt.system.find("the problem's files in `problem/`, the primitives library in\n  `primitives/`"),
            std::string::npos)
      << s.prompt.system;
  EXPECT_EQ(s.prompt.system.find(root_dir().string()), std::string::npos) << s.prompt.system;
  EXPECT_EQ(s.sandbox_links.at("problem"), spec.dir);
  EXPECT_EQ(s.sandbox_links.at("primitives"), root_dir() / "primitives");
  EXPECT_EQ(s.config["turns"], 12);
  EXPECT_EQ(s.config["compile_only"], true);
  EXPECT_EQ(s.config["gpus"], nlohmann::json({0, 0, 0, 0}));
  EXPECT_EQ(s.limits.max_cost_usd, 1.5);
}

}  // namespace
}  // namespace mgk::agent::testing
