// `mgk bench` and `mgk report` as a user runs them, against the scripted model over
// loopback HTTP (tests/bench_run/scripted_suite.h), with real nvcc and a real store. Without a
// GPU: --dry-run, the whole suite with --compile-only (killed with SIGKILL part way and
// resumed, it reports exactly like an uninterrupted run), resume offers, the budget. On a
// GPU machine: the whole suite with every rank on GPU 0, judged for real, not timed.
#include <signal.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <iostream>
#include <thread>

#include "report/bench_store.h"
#include "scripted_suite.h"
#include "store/store.h"
#include "support/child_process.h"
#include "problems/catalog.h"
#include "support/mgk_cli.h"
#include "support/test_paths.h"

namespace mgk::bench_run::testing {
namespace {

class BenchCli : public ::testing::Test {
 protected:
  BenchCli() {
    server_.respond_with([this](const test::RecordedRequest& r) { return suite_response(r, reply_delay_); });
    std::ofstream(dir_.path() / "config.json") << R"({"prices": {"gpt-test": {"input": 100, "output": 100}}})";
  }
  // A store and home of their own per name, so two runs can be compared.
  std::map<std::string, std::string> env(const std::string& name = "a") {
    return {{"MGK_HOME", (dir_.path() / (name + "-home")).string()},
            {"MGK_DB", db(name).string()},
            {"MGK_CONFIG", (dir_.path() / "config.json").string()},
            {"OPENAI_API_KEY", "sk-test-bench"},
            {"OPENAI_BASE_URL", server_.url() + "/v1"}};
  }
  std::filesystem::path db(const std::string& name) { return dir_.path() / (name + ".db"); }

  static std::vector<std::string> suite_args(std::vector<std::string> extra = {}) {
    // The attempt's cost limit well above its worst case (the second call's, estimated from the
    // whole conversation at the test's price, is near the default $3): two turns, always.
    std::vector<std::string> a = {"bench", "--model", "openai:gpt-test", "--problems", "collectives/*",
                                  "--samples", "2", "--turns", "2", "--jobs", "3", "--compile-only",
                                  "--attempt-max-cost", "10"};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  }

  nlohmann::json report_json(const std::string& name, int64_t run) {
    test::CliResult r = test::run_mgk({"report", std::to_string(run), "--format", "json"}, env(name));
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return r.json();
  }

  test::TempDir dir_{"mgk-bench"};
  test::ScriptedServer server_;
  std::chrono::milliseconds reply_delay_{0};
};

int finished_attempts(const std::filesystem::path& db) {
  if (!std::filesystem::exists(db)) return 0;
  try {
    store::Store s = store::Store::open_read_only(db);
    int done = 0;
    for (const auto& a : s.attempts_of_run(1)) done += a.status == store::Status::kDone;
    return done;
  } catch (const std::exception&) {
    return 0;  // not created yet
  }
}

TEST_F(BenchCli, DryRunShowsTheAttemptsAndTheFirstPromptAndCallsNoModel) {
  test::CliResult r = test::run_mgk(suite_args({"--dry-run"}), env());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  for (const char* part : {"dry run: nothing is sent to openai:gpt-test", "attempts: 16 (8 problem(s) x 2 sample(s))",
                           "collectives/scatter  (2 ranks)", "2 ranks: no GPU (compile only: nothing runs)",
                           "first prompt of collectives/all_gather sample 0:", "----- system -----",
                           "----- user -----\n# Problem: collectives/all_gather", "estimated tokens (characters / 4",
                           "at openai:gpt-test's list price", "pre-flight: ok"})
    EXPECT_NE(r.output.find(part), std::string::npos) << part << "\n" << r.output;
  EXPECT_EQ(server_.request_count(), 0u);
  if (!test::gpus_available()) {
    test::CliResult gpu = test::run_mgk({"bench", "--model", "openai:gpt-test", "--problems", "collectives/all_reduce",
                                         "--dry-run"},
                                        env());
    EXPECT_EQ(gpu.exit_code, 0) << gpu.output;
    EXPECT_NE(gpu.output.find("pre-flight: a real run would stop here: no GPU to judge kernels on"), std::string::npos)
        << gpu.output;
    test::CliResult real = test::run_mgk({"bench", "--model", "openai:gpt-test", "--problems", "collectives/all_reduce"},
                                         env());
    EXPECT_EQ(real.exit_code, 3) << real.output;
    EXPECT_NE(real.output.find("no GPU to judge kernels on"), std::string::npos) << real.output;
    EXPECT_NE(real.output.find("--compile-only"), std::string::npos) << real.output;
  }
  EXPECT_EQ(server_.request_count(), 0u) << "nothing is paid for before the machine is checked";
}

TEST_F(BenchCli, TheWholeSuiteKilledPartWayAndResumedReportsLikeAnUninterruptedRun) {
  reply_delay_ = std::chrono::milliseconds(150);  // spreads the run out, so the kill lands mid-way
  test::CliResult whole = test::run_mgk(suite_args(), env("whole"));
  ASSERT_EQ(whole.exit_code, 0) << whole.output;
  EXPECT_NE(whole.output.find("[16/16]"), std::string::npos) << whole.output;
  const size_t whole_requests = server_.request_count();

  {
    std::vector<std::string> argv = {test::mgk_binary().string()};
    for (const auto& a : suite_args()) argv.push_back(a);
    test::ChildProcess killed(argv, env("killed"), dir_.path() / "killed.log");
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(5);
    while (killed.running() && finished_attempts(db("killed")) < 5 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    ASSERT_TRUE(killed.running()) << "the run ended before it could be killed";
    killed.kill_group(SIGKILL);
    EXPECT_EQ(killed.wait(), 128 + SIGKILL);
  }
  const int before = finished_attempts(db("killed"));
  EXPECT_GE(before, 5);
  EXPECT_LT(before, 16) << "killed part way";

  // The same command again continues the run (no terminal: it says so and goes on).
  test::CliResult resumed = test::run_mgk(suite_args(), env("killed"));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("run 1 (started "), std::string::npos) << resumed.output;
  EXPECT_NE(resumed.output.find(": continuing it (--new starts another run)"), std::string::npos) << resumed.output;
  EXPECT_NE(resumed.output.find(std::to_string(before) + " of 16 attempts were finished before: skipped"),
            std::string::npos)
      << resumed.output;

  store::Store s = store::Store::open_read_only(db("killed"));
  EXPECT_EQ(s.attempts_of_run(1).size(), 16u) << "every (problem, sample) once: continued, not started again";
  EXPECT_EQ(s.run(1)->status, store::Status::kDone);

  const nlohmann::json a = report_json("whole", 1), b = report_json("killed", 1);
  ASSERT_FALSE(a.is_null());
  ASSERT_FALSE(b.is_null());
  EXPECT_EQ(report::test::without_run_dependent_fields(a), report::test::without_run_dependent_fields(b));
  // And what the report says is the suite's script.
  const nlohmann::json& m = a["runs"][0]["metrics"];
  EXPECT_EQ(m["finished"], 16);
  EXPECT_EQ(m["outcomes"]["compiled"], 12);         // 6 problems x 2 samples
  EXPECT_EQ(m["outcomes"]["did_not_compile"], 2);   // all_to_all
  EXPECT_EQ(m["outcomes"]["refused"], 2);           // scatter calls NCCL
  EXPECT_DOUBLE_EQ(m["suite"]["compiles_at_k"][0]["value"].get<double>(), 6.0 / 8);
  EXPECT_TRUE(m["suite"]["pass_at_k"][0]["value"].is_null()) << "compiled is not correct: not run";
  EXPECT_EQ(m["timing"], "compile only: nothing ran, nothing was checked or timed");
  EXPECT_EQ(m["total"]["tokens_in"], 8 * 2 * (1000 + 1500));  // two turns, every attempt
  std::cout << "requests: uninterrupted " << whole_requests << ", killed + resumed " << server_.request_count() - whole_requests
            << "\n";

  // The report of the resumed run in the other formats.
  test::CliResult table = test::run_mgk({"report", "1"}, env("killed"));
  EXPECT_EQ(table.exit_code, 0) << table.output;
  EXPECT_NE(table.output.find("compiles@1"), std::string::npos) << table.output;
  const auto html = test::artifacts_dir() / "bench-compile-only-report.html";
  test::CliResult h = test::run_mgk({"report", "1", "--format", "html", "-o", html.string()}, env("killed"));
  EXPECT_EQ(h.exit_code, 0) << h.output;
  EXPECT_NE(read_file(html).find("id=\"plot-outcomes\""), std::string::npos);
}

// Under --compile-only nothing runs, so no reference is compiled, by the pre-flight or by an
// evaluation: no kernel nvcc was given (each is staged in the cache by its bytes) is one.
TEST_F(BenchCli, ACompileOnlyRunCompilesNoReference) {
  std::vector<std::string> args = {"bench", "--model", "openai:gpt-test", "--problems", "collectives/all_gather",
                                   "--samples", "1", "--turns", "1", "--compile-only"};
  test::CliResult r = test::run_mgk(args, env());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string reference = read_file(problems::load("collectives/all_gather").reference_path());
  const std::filesystem::path staged = dir_.path() / "a-home/cache/staged";
  int compiled = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(staged))
    if (e.is_regular_file()) {
      ++compiled;
      EXPECT_NE(read_file(e.path()), reference) << "the reference was compiled under --compile-only";
    }
  EXPECT_GE(compiled, 1) << "the model's kernel was compiled";
}

TEST_F(BenchCli, ARerunOfAFinishedRunSpendsNothingAndResumeKeepsTheAttemptsArguments) {
  std::vector<std::string> args = {"bench", "--model", "openai:gpt-test", "--problems", "collectives/all_gather",
                                   "--samples", "1", "--turns", "1", "--compile-only"};
  test::CliResult first = test::run_mgk(args, env());
  ASSERT_EQ(first.exit_code, 0) << first.output;
  const size_t requests = server_.request_count();
  EXPECT_EQ(requests, 1u);
  test::CliResult again = test::run_mgk(args, env());
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("run 1 with these arguments is complete: 'mgk report 1' shows it; give --new"),
            std::string::npos)
      << again.output;
  EXPECT_EQ(server_.request_count(), requests);
  const std::optional<std::string> ended = store::Store::open_read_only(db("a")).run(1)->ended_at;
  ASSERT_TRUE(ended);
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));  // a rewritten end would differ
  test::CliResult resumed = test::run_mgk({"bench", "--resume", "1"}, env());
  EXPECT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("run 1 is complete, nothing to resume: 'mgk report 1' shows it"), std::string::npos)
      << resumed.output;
  EXPECT_EQ(store::Store::open_read_only(db("a")).run(1)->ended_at, ended) << "a complete run is left as it is";
  EXPECT_EQ(server_.request_count(), requests);

  // What defines the benchmark cannot change on a resume (--samples may grow: BenchRunsCli).
  test::CliResult other = test::run_mgk({"bench", "--resume", "1", "--turns", "3"}, env());
  EXPECT_EQ(other.exit_code, 64) << other.output;
  EXPECT_NE(other.output.find("run 1 has --turns 1; leave --turns out to resume it"), std::string::npos)
      << other.output;
  test::CliResult none = test::run_mgk({"bench", "--resume", "7"}, env());
  EXPECT_EQ(none.exit_code, 5) << "not found, as the README's table says: " << none.output;
  EXPECT_NE(none.output.find("no bench run 7"), std::string::npos) << none.output;
  test::CliResult fresh = test::run_mgk({"bench", "--problems", "collectives/*"}, env());
  EXPECT_EQ(fresh.exit_code, 64) << fresh.output;
  EXPECT_NE(fresh.output.find("give --model"), std::string::npos) << fresh.output;
  test::CliResult nothing = test::run_mgk({"bench", "--model", "openai:gpt-test", "--problems", "nosuch/*"}, env());
  EXPECT_EQ(nothing.exit_code, 64) << nothing.output;
  EXPECT_NE(nothing.output.find("matches no problem; the suite's "), std::string::npos) << nothing.output;
  EXPECT_NE(nothing.output.find("collectives/ (8)"), std::string::npos) << nothing.output;
  EXPECT_NE(nothing.output.find("'mgk problems' lists them"), std::string::npos) << nothing.output;
}

// Attempts the provider cut short are not the model's: the run ends with them counted apart,
// a rerun of the same command says how to retry them, and --retry-failed (on the command
// alone, no --resume) continues them to the end.
TEST_F(BenchCli, RetryFailedContinuesTheAttemptsTheProviderCutShortOfAFinishedRun) {
  std::atomic<bool> refuse{true};
  server_.respond_with([&](const test::RecordedRequest& r) {
    if (refuse) return test::ScriptedResponse::json(400, {{"error", {{"message", "scripted refusal"}, {"type", "invalid_request_error"}}}});
    return suite_response(r);
  });
  std::vector<std::string> args = {"bench", "--model", "openai:gpt-test", "--problems", "collectives/all_*",
                                   "--samples", "1", "--turns", "1", "--compile-only"};
  test::CliResult first = test::run_mgk(args, env());
  EXPECT_NE(first.output.find("3 cut short by the provider or the evaluator (infrastructure), not counted ('mgk bench --resume 1 "
                              "--retry-failed' runs those again)"),
            std::string::npos)
      << first.output;
  store::Store s = store::Store::open_read_only(db("a"));
  for (const auto& a : s.attempts_of_run(1)) EXPECT_EQ(a.status, store::Status::kFailed) << a.problem;

  refuse = false;
  test::CliResult again = test::run_mgk(args, env());
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("--retry-failed runs its 3 attempt(s) cut short by the provider or the evaluator again"),
            std::string::npos)
      << again.output;
  args.push_back("--retry-failed");
  test::CliResult retried = test::run_mgk(args, env());
  EXPECT_EQ(retried.exit_code, 0) << retried.output;
  auto attempts = s.attempts_of_run(1);
  ASSERT_EQ(attempts.size(), 3u) << "the failed attempts continue; no new ones";
  for (const auto& a : attempts) EXPECT_EQ(a.status, store::Status::kDone) << a.problem;
  const nlohmann::json j = report_json("a", 1);
  EXPECT_EQ(j["runs"][0]["metrics"]["finished"], 3) << retried.output;
  EXPECT_EQ(j["runs"][0]["metrics"]["infrastructure"], 0);
}

// The compute problems' replies are their plain candidates, one file with the shared
// headers pasted in: they compile as a model's reply would.
TEST_F(BenchCli, TheScriptedModelAnswersComputeProblemsWithKernelsThatCompile) {
  test::CliResult r = test::run_mgk({"bench", "--model", "openai:gpt-test", "--problems", "tp/gemm_a*", "--samples", "1",
                                     "--turns", "1", "--jobs", "2", "--compile-only"},
                                    env());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json j = report_json("a", 1);
  ASSERT_FALSE(j.is_null());
  const nlohmann::json& m = j["runs"][0]["metrics"];
  EXPECT_EQ(m["finished"], 2) << "tp/gemm_allgather and tp/gemm_allreduce";
  EXPECT_EQ(m["outcomes"]["compiled"], 2) << r.output;
}

TEST_F(BenchCli, TheBudgetStopsNewWorkCleanlyAndAResumeWithMoreFinishesTheRun) {
  // $100 per million tokens each way: a first turn (1000 in, 300 out) costs $0.13, a second
  // (1500 in) $0.18, so one attempt of two turns costs $0.31. Before each call its worst case
  // is held against the run's budget: the prompt it sends (about 11k tokens, $1.1) and 300
  // tokens out. $1.6 lets the first attempt and the second's first call through (today's
  // prompts), then the second's second call (0.44 spent + its worst case) could cross it and
  // is not made. What must hold whatever the prompts' length: the run stops below its budget.
  std::vector<std::string> args = {"bench", "--model", "openai:gpt-test", "--problems", "collectives/all_*",
                                   "--samples", "1", "--turns", "2", "--jobs", "1", "--compile-only",
                                   "--max-tokens", "300"};
  std::vector<std::string> capped = args;
  capped.insert(capped.end(), {"--max-cost", "1.6"});
  test::CliResult r = test::run_mgk(capped, env());
  EXPECT_EQ(r.exit_code, 4) << r.output;  // a limit was hit
  EXPECT_NE(r.output.find("stopped (budget spent) before the end: 'mgk bench --resume 1' continues (with a larger "
                          "--max-cost)"),
            std::string::npos)
      << r.output;
  store::Store s = store::Store::open_read_only(db("a"));
  auto attempts = s.attempts_of_run(1);
  EXPECT_LE(s.run(1)->cost_usd.value(), 1.6);
  ASSERT_GE(attempts.size(), 1u);
  ASSERT_LE(attempts.size(), 2u) << "the third attempt never started";
  EXPECT_EQ(attempts.back().status, store::Status::kInterrupted) << "stopped before a call, resumable";
  if (attempts.size() == 2) {  // as today's prompts make it
    EXPECT_EQ(attempts[0].status, store::Status::kDone);
    EXPECT_EQ(attempts[1].turns, 1);
    EXPECT_NEAR(s.run(1)->cost_usd.value(), 0.31 + 0.13, 1e-9);
  }
  EXPECT_EQ(s.run(1)->status, store::Status::kInterrupted);

  test::CliResult more = test::run_mgk({"bench", "--resume", "1", "--max-cost", "5"}, env());
  EXPECT_EQ(more.exit_code, 0) << more.output;
  attempts = s.attempts_of_run(1);
  ASSERT_EQ(attempts.size(), 3u);
  for (const auto& a : attempts) EXPECT_EQ(a.status, store::Status::kDone) << a.problem;
  EXPECT_NEAR(s.run(1)->cost_usd.value(), 3 * 0.31, 1e-9) << "continued where it stopped, nothing paid twice";
}

// A budget no call's worst case fits in stops the run before its first call: nothing is
// spent past it (the old check compared only what was spent, and let a call cross it).
TEST_F(BenchCli, ABudgetBelowTheFirstCallsWorstCaseMakesNoCall) {
  test::CliResult r = test::run_mgk({"bench", "--model", "openai:gpt-test", "--problems", "collectives/all_reduce",
                                     "--samples", "1", "--turns", "2", "--jobs", "1", "--compile-only", "--max-cost",
                                     "0.5"},
                                    env());
  EXPECT_EQ(r.exit_code, 4) << r.output;
  EXPECT_EQ(server_.request_count(), 0u) << r.output;
  store::Store s = store::Store::open_read_only(db("a"));
  EXPECT_NEAR(s.run(1)->cost_usd.value_or(0), 0, 1e-12);
}

// On the GPU machine (the lead's H200 run): the suite's collectives (the ones the script
// answers; the compute problems' plain candidates have tests/gpu/suite_gpu_test.cc), 2
// samples, every rank on GPU 0, judged for real, not timed. The report is left in the
// artifacts for bench/RESULTS.md.
TEST_F(BenchCli, WholeSuiteOnOneGpuRanksSharingIt) {
  if (!test::gpus_available()) GTEST_SKIP() << "no GPU";
  // --attempt-max-cost 10: at the test's price the second call's worst case is over the
  // default $3 (as suite_args says), and an attempt would end at its first kernel.
  test::CliResult r = test::run_mgk({"bench", "--model", "openai:gpt-test", "--problems", "collectives/*", "--samples", "2",
                                     "--turns", "2", "--jobs", "4", "--gpus", "0", "--attempt-max-cost", "10"},
                                    env(), 560);  // within the GPU machine's 10 minutes a command
  std::cout << r.output;
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json j = report_json("a", 1);
  ASSERT_FALSE(j.is_null());
  const nlohmann::json& m = j["runs"][0]["metrics"];
  EXPECT_EQ(m["timing"], "checked, not timed: ranks shared a GPU");
  std::map<std::string, std::string> outcome;
  for (const auto& p : j["runs"][0]["problems"])
    for (const auto& a : p["attempts"]) {
      const std::string o = a["outcome"];
      if (a["sample"] == 0) outcome[p["problem"]] = o;
      else EXPECT_EQ(o, outcome[p["problem"]]) << p["problem"] << ": the script answers both samples alike";
    }
  for (const char* p : {"collectives/all_gather", "collectives/all_reduce", "collectives/broadcast", "collectives/gather"})
    EXPECT_EQ(outcome[p], "correct") << p;
  EXPECT_EQ(outcome["collectives/reduce"], "hang");
  EXPECT_EQ(outcome["collectives/reduce_scatter"], "crash");
  EXPECT_EQ(outcome["collectives/scatter"], "refused");
  EXPECT_EQ(outcome["collectives/all_to_all"], "did_not_compile");
  EXPECT_TRUE(m["suite"]["fast_p_at_k"][1]["at_k"][0]["value"].is_null()) << "not timed, not 0";
  // The model was told plainly that nothing was timed.
  bool told = false;
  for (const auto& req : server_.requests())
    told |= req.body.find("share one GPU here") != std::string::npos;
  EXPECT_TRUE(told);
  for (const char* format : {"md", "json", "html"}) {
    const auto out = test::artifacts_dir() / (std::string("bench-gpu-report.") + format);
    test::CliResult w = test::run_mgk({"report", "1", "--format", format, "-o", out.string()}, env());
    EXPECT_EQ(w.exit_code, 0) << w.output;
    std::cout << "report: " << out.string() << "\n";
  }
}

}  // namespace
}  // namespace mgk::bench_run::testing
