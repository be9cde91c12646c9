// Whole refine sessions over real HTTP: compile error -> fix -> mismatch -> fix -> correct.
#include <gtest/gtest.h>

#include "agent_fixture.h"
#include "eval/compile.h"

namespace mgk::agent::testing {
namespace {

const char* kBroken =
    "#include \"mgk/solution.h\"\n"
    "MGK_EXPORT int mgk_setup(mgk_ctx* ctx) { return 0 }\n";  // missing ';'
const char* kWrong = "// v2: forgets the peer's half\n#include \"mgk/solution.h\"\n";
const char* kSlow = "// v3: correct, copy engine\n#include \"mgk/solution.h\"\n";
const char* kFast = "// v4: correct, one-shot pull\n#include \"mgk/solution.h\"\n";

// Compiles with the real nvcc (the evaluator's own compile step). mgk is not built without
// the CUDA toolkit, so a missing nvcc is a broken test machine: the test fails, it does not
// fall back to a canned compiler message.
ScriptedJudge::Step real_compile_step() {
  return [](const std::filesystem::path& file) {
    if (eval::nvcc_path().empty() || !std::filesystem::exists(eval::nvcc_path())) {
      ADD_FAILURE() << "nvcc not found at '" << eval::nvcc_path() << "' (set MGK_NVCC)";
      return compile_error_result("");
    }
    eval::CompileRequest req;
    req.source = file;
    eval::CompileResult c = eval::compile(req);
    EXPECT_FALSE(c.ok) << "the broken kernel compiled";
    return compile_error_result(c.log);
  };
}

std::vector<std::string> roles(const nlohmann::json& messages) {
  std::vector<std::string> r;
  for (const auto& m : messages) r.push_back(m["role"]);
  return r;
}

TEST_F(AgentTest, ARefineSessionFixesItsWayToAFastKernelOverOpenAI) {
  const test::ScriptedUsage usage[] = {{1200, 800, 0, 0, 100}, {2500, 700, 1024, 0, 0},
                                       {3900, 650, 2048, 0, 50}, {5200, 900, 3072, 0, 0}};
  const char* kernels[] = {kBroken, kWrong, kSlow, kFast};
  for (int i = 0; i < 4; ++i)
    server_.push(test::ScriptedResponse::json(200, test::openai_chat_reply(kernel_reply(kernels[i]), usage[i])));
  judge_.push(real_compile_step());
  judge_.push(mismatch_result());
  judge_.push(correct_result(0.8, 0.9));
  judge_.push(correct_result(1.5, 1.2));

  auto p = provider("openai:gpt-test");
  Agent agent = make_agent(setup(Mode::kRefine, 4), *p);
  std::vector<TurnReport> reports;
  agent.on_turn = [&](const TurnReport& r) { reports.push_back(r); };
  AttemptOutcome out = agent.start(new_run());

  EXPECT_EQ(out.reason, ExitReason::kTurnsExhausted);
  EXPECT_EQ(out.turns, 4);
  ASSERT_TRUE(out.best_kernel);
  EXPECT_EQ(read_file(*out.best_kernel), kFast);
  EXPECT_DOUBLE_EQ(*out.best_speedup, 1.2);
  EXPECT_EQ(judge_.judged_sources, (std::vector<std::string>{kBroken, kWrong, kSlow, kFast}));
  EXPECT_EQ(judge_.judged_files[0], out.sandbox_dir / "kernel_turn1.cu");
  EXPECT_EQ(out.sandbox_dir, sandbox_of(out.attempt_id));

  // What the model was told, turn by turn.
  auto requests = server_.requests();
  ASSERT_EQ(requests.size(), 4u);
  const auto& first = requests[0].json["messages"];
  EXPECT_EQ(roles(first), (std::vector<std::string>{"system", "user"}));
  EXPECT_EQ(first[0]["content"], "SYSTEM PROMPT for the test");
  const auto& second = requests[1].json["messages"];
  EXPECT_EQ(roles(second), (std::vector<std::string>{"system", "user", "assistant", "user"}));
  std::string compile_feedback = second[3]["content"];
  EXPECT_NE(compile_feedback.find("Turn 1 of 4: your kernel did not compile"), std::string::npos);
  EXPECT_NE(compile_feedback.find("error"), std::string::npos) << compile_feedback;
  std::string mismatch_feedback = requests[2].json["messages"].back()["content"];
  EXPECT_NE(mismatch_feedback.find("results are wrong"), std::string::npos);
  EXPECT_NE(mismatch_feedback.find("got 0.5, expected 1.25 (allowed error 0.02); 12 of 524288 elements wrong"), std::string::npos);
  std::string slow_feedback = requests[3].json["messages"].back()["content"];
  EXPECT_NE(slow_feedback.find("not faster than the reference on\nevery size (slowest speedup 0.80×)"),
            std::string::npos) << slow_feedback;
  EXPECT_NE(slow_feedback.find("| small | 100.0 | 125.0 | 0.80× |"), std::string::npos) << slow_feedback;
  EXPECT_NE(slow_feedback.find("your next reply is your last"), std::string::npos);
  EXPECT_EQ(requests[0].json["max_completion_tokens"], 4096);  // OpenAI's name for it

  // What the store kept.
  auto summary = store_.attempt(out.attempt_id);
  ASSERT_TRUE(summary);
  EXPECT_EQ(summary->status, store::Status::kDone);
  EXPECT_EQ(summary->exit_reason, "turns_exhausted");
  EXPECT_EQ(summary->mode, "refine");
  EXPECT_EQ(summary->prompt_version, prompts_.version());
  EXPECT_EQ(summary->turns, 4);
  EXPECT_EQ(summary->best_kernel_hash, store_.put_kernel(kFast));
  // The sums of the four usages above, and their cost at $2 in, $0.50 cached, $8 out per
  // million: uncached 1200 + 1476 + 1852 + 2128 = 6656 tokens, cached 6144, out 3050:
  // 0.013312 + 0.003072 + 0.0244 = $0.040784.
  const double cost = 0.040784;
  EXPECT_EQ(summary->tokens_in, 12800);
  EXPECT_EQ(summary->tokens_out, 3050);
  EXPECT_EQ(summary->tokens_cached, 6144);
  EXPECT_EQ(summary->tokens_reasoning, 150);
  EXPECT_NEAR(summary->cost_usd.value(), cost, 1e-12);
  EXPECT_NEAR(out.cost_usd, cost, 1e-12);

  auto turns = store_.turns(out.attempt_id);
  ASSERT_EQ(turns.size(), 4u);
  EXPECT_EQ(turns[0].messages.size(), 2u);  // system + problem
  EXPECT_EQ(turns[1].messages.size(), 1u);  // the compile feedback
  EXPECT_EQ(turns[1].messages[0]["content"], compile_feedback);
  EXPECT_EQ(turns[0].feedback, compile_feedback);
  EXPECT_EQ(turns[3].action, "kernel");
  EXPECT_EQ(turns[3].kernel_hash, store_.put_kernel(kFast));
  EXPECT_EQ(turns[2].finish_reason, "stop");
  auto evals = store_.evaluations_of_attempt(out.attempt_id);
  ASSERT_EQ(evals.size(), 4u);
  EXPECT_EQ(evals[0].verdict, "compile_error");
  EXPECT_EQ(evals[1].verdict, "incorrect");
  EXPECT_EQ(evals[3].verdict, "correct");
  EXPECT_EQ(evals[3].turn_index, 3);

  ASSERT_EQ(reports.size(), 4u);
  EXPECT_EQ(reports[0].outcome, "compile_error");
  EXPECT_EQ(reports[3].outcome, "correct 1.20x");
  EXPECT_NEAR(reports[3].total_cost_usd, cost, 1e-12);
}

TEST_F(AgentTest, ARefineSessionOverAnthropicKeepsTheSystemPromptTopLevel) {
  server_.push(test::ScriptedResponse::json(
      200, test::anthropic_message_reply("I think a ring is best.", {500, 40, 0, 0, 0})));
  server_.push(test::ScriptedResponse::json(
      200, test::anthropic_message_reply(kernel_reply(kFast), {700, 900, 300, 100, 0})));
  judge_.push(correct_result(2.0, 1.3));

  auto p = provider("anthropic:claude-test");
  AttemptOutcome out = make_agent(setup(Mode::kRefine, 2), *p).start(new_run());

  EXPECT_EQ(out.reason, ExitReason::kTurnsExhausted);
  ASSERT_TRUE(out.best_kernel);
  EXPECT_EQ(read_file(*out.best_kernel), kFast);
  auto requests = server_.requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[1].path, "/v1/messages");
  EXPECT_EQ(requests[1].json["system"][0]["text"], "SYSTEM PROMPT for the test");
  EXPECT_EQ(requests[1].json["system"][0]["cache_control"]["type"], "ephemeral");
  const auto& msgs = requests[1].json["messages"];
  EXPECT_EQ(roles(msgs), (std::vector<std::string>{"user", "assistant", "user"}));
  EXPECT_NE(std::string(msgs[2]["content"].is_string() ? msgs[2]["content"].get<std::string>()
                                                       : msgs[2]["content"][0]["text"].get<std::string>())
                .find("no fenced code block"),
            std::string::npos);
  auto summary = store_.attempt(out.attempt_id);
  // Anthropic counts cached and cache-written tokens apart from input_tokens; the store
  // holds the whole prompt.
  EXPECT_EQ(summary->tokens_in, 500 + 700 + 300 + 100);
  EXPECT_EQ(summary->tokens_cached, 300);
  EXPECT_EQ(summary->tokens_out, 40 + 900);
  // $2 in, $0.50 cache read, $2.50 cache write, $8 out per million: 0.00132 + 0.009.
  EXPECT_NEAR(summary->cost_usd.value(), 0.01032, 1e-12);
}

// Two stores sharing one MGK_HOME (a Slurm array: one store per task, one home) number
// their attempts from 1 alike; their sandboxes must not be the same folder.
TEST_F(AgentTest, StoresSharingAHomeGetSeparateSandboxes) {
  store::Store other = store::Store::open(home_.path() / "other.db");
  server_.push(test::ScriptedResponse::json(200, test::openai_chat_reply(kernel_reply(kSlow))));
  server_.push(test::ScriptedResponse::json(200, test::openai_chat_reply(kernel_reply(kFast))));
  judge_.push(correct_result(1.1, 1.1));
  judge_.push(correct_result(1.3, 1.3));
  auto p = provider("openai:gpt-test");
  AttemptOutcome mine = make_agent(setup(Mode::kRefine, 1), *p).start(new_run());
  AgentDeps deps{p.get(), &judge_, &other, &prompts_, &interrupt_};
  AttemptOutcome theirs =
      Agent(setup(Mode::kRefine, 1), deps).start(other.begin_run({"generate", "test", {}}));
  ASSERT_EQ(mine.attempt_id, theirs.attempt_id);
  EXPECT_NE(mine.sandbox_dir, theirs.sandbox_dir);
  EXPECT_EQ(read_file(mine.sandbox_dir / "best.cu"), kSlow);
  EXPECT_EQ(read_file(theirs.sandbox_dir / "best.cu"), kFast);
}

}  // namespace
}  // namespace mgk::agent::testing
