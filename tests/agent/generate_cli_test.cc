// `mgk generate` as a user runs it. Without a GPU: the command line and its errors. With
// GPUs (the gpu machine): whole sessions against a scripted model over loopback HTTP, in
// both modes, judged by the real evaluator.
#include <gtest/gtest.h>

#include <sstream>

#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <fstream>
#include <iostream>

#include "agent_fixture.h"
#include "process/spawn.h"
#include "support/background_mgk.h"
#include "support/fakes.h"
#include "support/mgk_cli.h"

namespace mgk::agent::testing {
namespace {

class GenerateCli : public ::testing::Test {
 protected:
  std::map<std::string, std::string> env() {
    std::ofstream(dir_.path() / "config.json")
        << R"({"prices": {"gpt-test": {"input": 2, "output": 8}}})";
    return {{"MGK_HOME", (dir_.path() / "home").string()},
            {"MGK_DB", (dir_.path() / "mgk.db").string()},
            {"MGK_CONFIG", (dir_.path() / "config.json").string()},
            {"OPENAI_API_KEY", kOpenAIKey},
            {"OPENAI_BASE_URL", server_.url() + "/v1"}};
  }
  test::TempDir dir_{"mgk-generate"};
  test::ScriptedServer server_;
};

TEST_F(GenerateCli, NeedsAProblemAndAModel) {
  test::CliResult r = test::run_mgk({"generate"}, env());
  EXPECT_EQ(r.exit_code, 64) << r.output;
  EXPECT_NE(r.output.find("give --problem and --model (or --resume ATTEMPT_ID)"), std::string::npos) << r.output;
}

TEST_F(GenerateCli, RejectsAnUnknownModeAndAnUnknownAttempt) {
  test::CliResult r = test::run_mgk(
      {"generate", "--problem", "collectives/all_reduce", "--model", "openai:gpt-test", "--mode", "chat"}, env());
  EXPECT_EQ(r.exit_code, 64) << r.output;
  r = test::run_mgk({"generate", "--resume", "999"}, env());
  EXPECT_EQ(r.exit_code, 5) << r.output;  // not found
  EXPECT_NE(r.output.find("no attempt 999"), std::string::npos) << r.output;
}

TEST_F(GenerateCli, AModelWithoutAPriceNeedsOneForACostLimit) {
  test::CliResult r = test::run_mgk(
      {"generate", "--problem", "collectives/all_reduce", "--model", "openai:gpt-unpriced"}, env());
  EXPECT_EQ(r.exit_code, 64) << r.output;
  EXPECT_NE(r.output.find("mgk: error: no price is known for openai:gpt-unpriced, so a cost limit "
                          "(--max-cost $3) cannot be enforced: give its price in " +
                          (dir_.path() / "config.json").string()),
            std::string::npos)
      << r.output;
  EXPECT_EQ(server_.request_count(), 0u);
}

TEST_F(GenerateCli, WithoutAGpuItSaysWhatToDoBeforeSpendingAnything) {
  if (test::gpus_available()) GTEST_SKIP() << "this machine has GPUs";
  test::CliResult r = test::run_mgk(
      {"generate", "--problem", "collectives/all_reduce", "--model", "openai:gpt-test-2025-01-01"}, env());
  // How a dated name is billed is said before anything else.
  EXPECT_NE(r.output.find("pricing openai:gpt-test-2025-01-01 as 'gpt-test' ($2 in / $8 out per "
                          "million tokens)"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("no GPU to judge kernels on"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("mgk doctor"), std::string::npos) << r.output;
  EXPECT_EQ(server_.request_count(), 0u);
}

TEST_F(GenerateCli, ADryRunPrintsTheFirstPromptAndCallsNoModelEvenWithoutAKeyOrAGpu) {
  auto e = env();
  e.erase("OPENAI_API_KEY");
  test::CliResult r = test::run_mgk(
      {"generate", "--problem", "collectives/all_reduce", "--model", "openai:gpt-test", "--world", "4", "--dry-run"}, e);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  for (const char* part : {"attempts: 1 (1 problem(s) x 1 sample(s)), refine mode, up to 8 turns",
                           "----- system -----", "----- user -----\n# Problem: collectives/all_reduce",
                           "estimated tokens"})
    EXPECT_NE(r.output.find(part), std::string::npos) << part << "\n" << r.output;
  if (!test::gpus_available())
    EXPECT_NE(r.output.find("pre-flight: a real run would stop here: no GPU to judge kernels on"), std::string::npos)
        << r.output;
  EXPECT_EQ(server_.request_count(), 0u);
}

TEST_F(GenerateCli, ACompileOnlySessionRunsWithoutAGpuAndTellsTheModelNothingRan) {
  const std::string plain = "```cuda\n#include \"mgk/solution.h\"\nMGK_EXPORT int mgk_setup(mgk_ctx*) { return 0; }\n"
                            "MGK_EXPORT void mgk_teardown(mgk_ctx*) {}\nMGK_EXPORT int mgk_run(mgk_ctx*, const "
                            "mgk_tensor*, int, const mgk_tensor*, int, cudaStream_t) { return 0; }\n```\n";
  server_.push(test::ScriptedResponse::json(200, test::openai_chat_reply(plain)));
  server_.push(test::ScriptedResponse::json(200, test::openai_chat_reply(plain)));
  test::CliResult r = test::run_mgk({"generate", "--problem", "collectives/all_reduce", "--model", "openai:gpt-test",
                                     "--turns", "2", "--compile-only"},
                                    env());
  EXPECT_EQ(r.exit_code, 0) << r.output;  // kernels compiled: all --compile-only finds, as eval --compile-only
  EXPECT_NE(r.output.find("turn 1/2  kernel  compiled"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("best kernel: none correct"), std::string::npos) << r.output;
  auto requests = server_.requests();
  ASSERT_EQ(requests.size(), 2u);
  const std::string feedback = requests[1].json["messages"].back()["content"];
  EXPECT_NE(feedback.find("it was not run, checked or timed"), std::string::npos) << feedback;
}

std::vector<nlohmann::json> json_lines(const std::string& output) {
  std::vector<nlohmann::json> events;
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);)
    if (!line.empty() && line.front() == '{') events.push_back(nlohmann::json::parse(line));
  return events;
}

// --json: every turn and the end as one JSON object a line, costs null where unknown, the
// verdicts and the attempt as the text says them; the finished-attempt answer too.
TEST_F(GenerateCli, JsonPrintsEachTurnAndTheEndAsJsonLines) {
  const std::string plain = "```cuda\n#include \"mgk/solution.h\"\nMGK_EXPORT int mgk_setup(mgk_ctx*) { return 0; }\n"
                            "MGK_EXPORT void mgk_teardown(mgk_ctx*) {}\nMGK_EXPORT int mgk_run(mgk_ctx*, const "
                            "mgk_tensor*, int, const mgk_tensor*, int, cudaStream_t) { return 0; }\n```\n";
  server_.push(test::ScriptedResponse::json(200, test::openai_chat_reply("no code block, sorry", {100, 20})));
  server_.push(test::ScriptedResponse::json(200, test::openai_chat_reply(plain, {120, 30})));
  test::CliResult r = test::run_mgk({"generate", "--problem", "collectives/all_reduce", "--model", "openai:gpt-test",
                                     "--turns", "2", "--compile-only", "--json"},
                                    env());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const std::vector<nlohmann::json> events = json_lines(r.output);
  ASSERT_EQ(events.size(), 3u) << r.output;
  EXPECT_EQ(events[0]["event"], "turn");
  EXPECT_EQ(events[0]["turn"], 1);
  EXPECT_EQ(events[0]["turns"], 2);
  EXPECT_EQ(events[0]["action"], "format_error") << events[0].dump();
  EXPECT_EQ(events[1]["outcome"], "compiled") << events[1].dump();
  EXPECT_EQ(events[1]["tokens_in"], 120);
  EXPECT_TRUE(events[1]["total_cost_usd"].is_number()) << "gpt-test has a price";
  const nlohmann::json& end = events[2];
  EXPECT_EQ(end["event"], "ended");
  EXPECT_EQ(end["attempt"], 1);
  EXPECT_EQ(end["exit_reason"], "turns_exhausted") << end.dump();
  EXPECT_TRUE(end["final_verdict"].is_null()) << "refine mode judges no final kernel.cu";
  EXPECT_EQ(end["tokens_out"], 50);
  EXPECT_TRUE(end["best_kernel"].is_null());
  EXPECT_FALSE(end["resumable"].get<bool>());
  // No text lines on standard output besides the JSON (logs go to standard error).
  EXPECT_EQ(r.output.find("best kernel:"), std::string::npos) << r.output;

  test::CliResult finished = test::run_mgk({"generate", "--resume", "1", "--json"}, env());
  EXPECT_EQ(finished.exit_code, 0) << finished.output;
  const std::vector<nlohmann::json> answer = json_lines(finished.output);
  ASSERT_EQ(answer.size(), 1u) << finished.output;
  EXPECT_EQ(answer[0]["event"], "finished");
  EXPECT_EQ(answer[0]["turns"], 2);

  test::CliResult both = test::run_mgk({"generate", "--problem", "collectives/all_reduce", "--model",
                                        "openai:gpt-test", "--dry-run", "--json"},
                                       env());
  EXPECT_EQ(both.exit_code, 64) << both.output;
  EXPECT_NE(both.output.find("--json"), std::string::npos) << both.output;
}

// -v turns on the debug lines: each HTTP try of a model call, with its number.
TEST_F(GenerateCli, VerboseShowsEachTryOfAModelCall) {
  for (int i = 0; i < 2; ++i)
    server_.push(test::ScriptedResponse::json(200, test::openai_chat_reply("no code block, sorry")));
  const std::vector<std::string> args = {"generate", "--problem", "collectives/all_reduce", "--model",
                                         "openai:gpt-test", "--turns", "1", "--compile-only"};
  std::vector<std::string> verbose = {"-v"};
  verbose.insert(verbose.end(), args.begin(), args.end());
  test::CliResult loud = test::run_mgk(verbose, env());
  EXPECT_NE(loud.output.find("/chat/completions for model 'gpt-test' (try 1 of "), std::string::npos) << loud.output;
  test::CliResult quiet = test::run_mgk(args, env());
  EXPECT_EQ(quiet.output.find("(try 1 of "), std::string::npos) << quiet.output;
}

// The first-turn failure seen with a frontier model: a GEMM kernel that loads cuBLASLt
// with dlopen/dlsym. The feedback names the rule and what to use instead (the linked
// cuBLASLt, mgk/lt_gemm.h), so the next turn need not drop cuBLAS.
TEST_F(GenerateCli, AKernelThatLoadsCublasLtIsToldTheRuleAndWhatToUseInstead) {
  const std::string loads = "I load cuBLASLt myself.\n```cuda\n#include <dlfcn.h>\n#include \"mgk/solution.h\"\n"
                            "static void* lib;\nMGK_EXPORT int mgk_setup(mgk_ctx*) { lib = dlopen(\"libcublasLt.so\", "
                            "RTLD_NOW); return lib ? 0 : 1; }\nMGK_EXPORT void mgk_teardown(mgk_ctx*) {}\nMGK_EXPORT int "
                            "mgk_run(mgk_ctx*, const mgk_tensor*, int, const mgk_tensor*, int, cudaStream_t) { return 0; "
                            "}\n```\n";
  server_.push(test::ScriptedResponse::json(200, test::openai_chat_reply(loads)));
  server_.push(test::ScriptedResponse::json(200, test::openai_chat_reply(loads)));
  test::CliResult r = test::run_mgk({"generate", "--problem", "tp/gemm_allreduce", "--model", "openai:gpt-test",
                                     "--turns", "2", "--compile-only"},
                                    env());
  auto requests = server_.requests();
  ASSERT_EQ(requests.size(), 2u) << r.output;
  const std::string system = requests[0].json["messages"][0]["content"];
  EXPECT_NE(system.find("mgk/lt_gemm.h"), std::string::npos) << "the opening names the GEMM helper";
  EXPECT_NE(system.find("-lcublasLt"), std::string::npos) << "the opening says cuBLASLt is linked";
  const std::string feedback = requests[1].json["messages"].back()["content"];
  EXPECT_NE(feedback.find("refused"), std::string::npos) << feedback;
  EXPECT_NE(feedback.find("'dlopen'"), std::string::npos) << feedback;
  EXPECT_NE(feedback.find("No code loaded or looked up at run time"), std::string::npos) << feedback;
  EXPECT_NE(feedback.find("`mgk/lt_gemm.h`"), std::string::npos) << feedback;
  EXPECT_EQ(feedback.find("(dlopen(\""), std::string::npos) << "the feedback quotes the rule, not the kernel";
}

// A resumed session samples and stops as it began: it ran with the defaults (16384 tokens,
// the provider's temperature, a $3 cost limit) whatever the first session was given.
TEST_F(GenerateCli, AResumedSessionKeepsItsSamplingAndLimitsAndTheFlagsGivenOverrideThem) {
  for (int i = 0; i < 3; ++i)
    server_.push(test::ScriptedResponse::json(200, test::openai_chat_reply("no code block, sorry")));
  test::CliResult first = test::run_mgk({"generate", "--problem", "collectives/all_reduce", "--model", "openai:gpt-test",
                                         "--turns", "1", "--compile-only", "--max-tokens", "777", "--temperature",
                                         "0.25", "--max-cost", "0.5"},
                                        env());
  ASSERT_EQ(first.exit_code, 4) << first.output;
  test::CliResult resumed = test::run_mgk({"generate", "--resume", "1", "--turns", "2"}, env());
  EXPECT_EQ(resumed.exit_code, 4) << resumed.output;
  test::CliResult again = test::run_mgk({"generate", "--resume", "1", "--turns", "3", "--max-tokens", "555"}, env());
  EXPECT_EQ(again.exit_code, 4) << again.output;
  const auto requests = server_.requests();
  ASSERT_EQ(requests.size(), 3u) << resumed.output << again.output;
  EXPECT_EQ(requests[1].json["max_completion_tokens"], 777) << requests[1].json.dump();
  EXPECT_EQ(requests[1].json["temperature"], 0.25);
  EXPECT_EQ(requests[2].json["max_completion_tokens"], 555) << "the flag given wins";
  EXPECT_EQ(requests[2].json["temperature"], 0.25);
}

// A finished attempt is left as it is: resumed without --turns, or with no more turns than
// it had, it calls nothing and says so; --turns N gives it more.
TEST_F(GenerateCli, AResumeOfAFinishedAttemptDoesNothingUnlessAskedForMoreTurns) {
  for (int i = 0; i < 2; ++i)
    server_.push(test::ScriptedResponse::json(200, test::openai_chat_reply("no code block, sorry")));
  test::CliResult first = test::run_mgk({"generate", "--problem", "collectives/all_reduce", "--model", "openai:gpt-test",
                                         "--turns", "1", "--compile-only"},
                                        env());
  ASSERT_EQ(first.exit_code, 4) << first.output;
  for (const std::vector<std::string>& args : {std::vector<std::string>{"generate", "--resume", "1"},
                                               std::vector<std::string>{"generate", "--resume", "1", "--turns", "1"}}) {
    test::CliResult r = test::run_mgk(args, env());
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("attempt 1 is finished (turns_exhausted after 1 turn(s)): nothing to resume; 'mgk show 1' "
                            "shows it, --turns 2 (or more) gives it more turns"),
              std::string::npos)
        << r.output;
  }
  EXPECT_EQ(server_.request_count(), 1u) << "no paid call for a finished attempt";
  test::CliResult more = test::run_mgk({"generate", "--resume", "1", "--turns", "2"}, env());
  EXPECT_EQ(more.exit_code, 4) << more.output;
  EXPECT_EQ(server_.request_count(), 2u);
}

// `--tune` with scripted rank processes (tests/fakes/): the session's kernel is correct and
// timed (two scripted GPUs), then the tuner compiles and times its variants with real nvcc.
// Ctrl-C during the tuning once ended in exit 0, the session's code, as if nothing had been cut.
TEST_F(GenerateCli, CtrlCWhileTuningTheBestKernelIsExit130) {
  test::TempDir bin("mgk-fakes");
  auto e = env();
  e["MGK_HARNESS"] = test::fake("scripted-harness", bin.path(), "scripted-harness-correct").string();
  e["MGK_CANDIDATE"] = test::fake("scripted-candidate", bin.path(), "scripted-candidate").string();
  const std::string kernel =  // what it computes is the scripted harness's to judge
      "// mgk:tune VARIANT range(1, 16)\n#ifndef VARIANT\n#define VARIANT 1\n#endif\n"
      "#include \"mgk/solution.h\"\nMGK_EXPORT int mgk_setup(mgk_ctx*) { return 0; }\n"
      "MGK_EXPORT void mgk_teardown(mgk_ctx*) {}\nMGK_EXPORT int mgk_run(mgk_ctx*, const mgk_tensor*, int, "
      "const mgk_tensor*, int, cudaStream_t) { return VARIANT - VARIANT; }\n";
  server_.push(test::ScriptedResponse::json(200, test::openai_chat_reply(kernel_reply(kernel))));
  const auto out = dir_.path() / "generate.out";
  process::Child c = test::spawn_mgk({"generate", "--problem", "collectives/all_reduce", "--model", "openai:gpt-test",
                                      "--turns", "1", "--world", "2", "--tune"},
                                     e, out);
  ASSERT_TRUE(test::wait_until(c, [&] { return read_file(out).find("  tune: ok") != std::string::npos; },
                               std::chrono::minutes(5)))
      << "no tuning trial finished:\n" << read_file(out);
  ::kill(c.pid(), SIGINT);
  const int status = c.wait();
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 130) << read_file(out);
  EXPECT_NE(read_file(out).find("turn 1/1  kernel  correct"), std::string::npos) << read_file(out);
}

// --- on the GPU machine ---

std::filesystem::path expert_kernel() { return root_dir() / "problems/collectives/all_reduce/expert.cu"; }

TEST_F(GenerateCli, ARefineSessionOnTheGpusKeepsTheCorrectKernel) {
  if (!test::gpus_available()) GTEST_SKIP() << "no GPU";
  if (!std::filesystem::exists(expert_kernel())) GTEST_SKIP() << "no expert all_reduce yet";
  server_.push(test::ScriptedResponse::json(
      200, test::openai_chat_reply("Broken first.\n```cuda\nint broken(\n```\n", {1000, 100})));
  server_.push(test::ScriptedResponse::json(
      200, test::openai_chat_reply(kernel_reply(read_file(expert_kernel())), {2000, 3000})));
  test::CliResult r = test::run_mgk({"generate", "--problem", "collectives/all_reduce", "--model",
                                     "openai:gpt-test", "--turns", "2", "--world", "2"},
                                    env());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("turn 1/2  kernel  compile_error"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("turn 2/2  kernel  correct"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("best kernel: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("ended: turns_exhausted"), std::string::npos) << r.output;
  auto requests = server_.requests();
  ASSERT_EQ(requests.size(), 2u);
  std::string system = requests[0].json["messages"][0]["content"];
  EXPECT_NE(system.find("SMs each"), std::string::npos) << "the topology comes from the GPUs";
  // The whole attempt is visible afterwards in `mgk show`.
  auto at = r.output.find("attempt ");
  ASSERT_NE(at, std::string::npos) << r.output;
  std::string id = r.output.substr(at + 8, r.output.find(' ', at + 8) - at - 8);
  test::CliResult shown = test::run_mgk({"show", id}, env());
  EXPECT_EQ(shown.exit_code, 0) << shown.output;
  EXPECT_NE(shown.output.find("compile_error"), std::string::npos) << shown.output;
  EXPECT_NE(shown.output.find("correct"), std::string::npos) << shown.output;
  EXPECT_NE(shown.output.find("mgk_run"), std::string::npos) << "the kernel source is shown";
  std::cout << "---- mgk generate ----\n" << r.output << "---- mgk show " << id << " ----\n" << shown.output;
}

TEST_F(GenerateCli, OnOneGpuTheRanksShareItAndTheModelHearsNothingWasTimed) {
  int gpus = 0;
  if (!test::gpus_available(&gpus)) GTEST_SKIP() << "no GPU";
  const std::string candidate = read_file(test::tests_dir() / "gpu/candidates/all_reduce.cu");
  std::string common = read_file(test::tests_dir() / "gpu/candidates/simple_common.cuh");
  common.erase(0, common.find("#pragma once") + 12);
  std::string one_file = candidate;
  one_file.replace(one_file.find("#include \"simple_common.cuh\""), 29, common);
  for (int i = 0; i < 2; ++i)
    server_.push(test::ScriptedResponse::json(200, test::openai_chat_reply(kernel_reply(one_file))));
  test::CliResult r = test::run_mgk({"generate", "--problem", "collectives/all_reduce", "--model", "openai:gpt-test",
                                     "--turns", "2", "--world", "4", "--gpus", "0,0,0,0"},
                                    env());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("turn 1/2  kernel  correct (not timed)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("(not timed: ranks share a GPU)"), std::string::npos) << r.output;
  auto requests = server_.requests();
  ASSERT_EQ(requests.size(), 2u);
  const std::string feedback = requests[1].json["messages"].back()["content"];
  EXPECT_NE(feedback.find("The 4 ranks share one GPU here"), std::string::npos) << feedback;
}

TEST_F(GenerateCli, AShellSessionOnTheGpusEvaluatesInTheSandboxAndSubmits) {
  if (!test::gpus_available()) GTEST_SKIP() << "no GPU";
  if (!std::filesystem::exists(expert_kernel())) GTEST_SKIP() << "no expert all_reduce yet";
  server_.push(test::ScriptedResponse::json(200, test::openai_chat_reply(bash_reply(
      "cp " + expert_kernel().string() + " kernel.cu && mgk eval collectives/all_reduce kernel.cu " +
      (test::probe_gpus().count >= 2 ? std::string("--world 2") : std::string("--gpus 0,0"))))));
  server_.push(test::ScriptedResponse::json(200, test::openai_chat_reply(bash_reply("echo MGK_SUBMIT"))));
  test::CliResult r = test::run_mgk({"generate", "--problem", "collectives/all_reduce", "--model",
                                     "openai:gpt-test", "--mode", "shell", "--turns", "4"},
                                    env());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("ended: submitted"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("final kernel.cu: correct"), std::string::npos) << r.output;
  auto requests = server_.requests();
  ASSERT_EQ(requests.size(), 2u);
  std::string observation = requests[1].json["messages"].back()["content"];
  EXPECT_NE(observation.find("exit 0"), std::string::npos) << observation;
  EXPECT_NE(observation.find("correct"), std::string::npos) << observation;
}

}  // namespace
}  // namespace mgk::agent::testing
