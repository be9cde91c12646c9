// What `mgk bench` refuses before any run exists (exit 64, one line, nothing stored, no
// model called): an unpriced model with a cost limit, and every option `generate` refuses;
// and what a resume may change (the limits), saying so in one line.
#include <gtest/gtest.h>

#include <atomic>
#include <fstream>

#include "scripted_suite.h"
#include "store/store.h"
#include "support/mgk_cli.h"
#include "support/test_paths.h"

namespace mgk::bench_run::testing {
namespace {

// A local model as vLLM serves it: the scripted server, and a config that prices nothing.
class BenchPreflight : public ::testing::Test {
 protected:
  BenchPreflight() {
    server_.respond_with([](const test::RecordedRequest& r) { return suite_response(r); });
    std::ofstream(config()) << R"({"prices": {}})";
  }
  std::filesystem::path config() const { return dir_.path() / "config.json"; }
  std::filesystem::path db() const { return dir_.path() / "a.db"; }
  std::map<std::string, std::string> env() {
    return {{"MGK_HOME", (dir_.path() / "home").string()},
            {"MGK_DB", db().string()},
            {"MGK_CONFIG", config().string()},
            {"VLLM_BASE_URL", server_.url() + "/v1"}};
  }
  static std::vector<std::string> args(std::vector<std::string> extra = {}) {
    std::vector<std::string> a = {"bench",   "--model", "vllm:qwen-local", "--problems", "collectives/all_gather",
                                  "--turns", "1",       "--compile-only"};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  }
  size_t runs() {
    if (!std::filesystem::exists(db())) return 0;
    return store::Store::open_read_only(db()).runs_of_kind("bench").size();
  }

  test::TempDir dir_{"mgk-bench-preflight"};
  test::ScriptedServer server_;
};

TEST_F(BenchPreflight, AnUnpricedModelWithACostLimitIsRefusedNamingTheFlagThatHelps) {
  test::CliResult r = test::run_mgk(args(), env());
  EXPECT_EQ(r.exit_code, 64) << r.output;
  EXPECT_NE(r.output.find("mgk: error: no price is known for vllm:qwen-local, so a cost limit (--attempt-max-cost $3) "
                          "cannot be enforced: give its price in " +
                          config().string() + " as \"prices\": {\"vllm:qwen-local\": {\"input\": USD_PER_MTOK"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("or pass --attempt-max-cost 0 for no cost limit"), std::string::npos) << r.output;

  test::CliResult budget = test::run_mgk(args({"--attempt-max-cost", "0", "--max-cost", "5"}), env());
  EXPECT_EQ(budget.exit_code, 64) << budget.output;
  EXPECT_NE(budget.output.find("a cost limit (--max-cost $5) cannot be enforced"), std::string::npos) << budget.output;
  EXPECT_NE(budget.output.find("or pass --max-cost 0 for no cost limit"), std::string::npos) << budget.output;
  EXPECT_EQ(runs(), 0u) << "refused before any run exists";
  EXPECT_EQ(server_.request_count(), 0u);
}

TEST_F(BenchPreflight, EveryOptionGenerateRefusesBenchRefusesWithTheSameLine) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--max-cost", "-5"}, "--max-cost: must be a number of at least 0, not '-5'"},
      {{"--attempt-max-cost", "-1"}, "--attempt-max-cost: must be a number of at least 0, not '-1'"},
      {{"--attempt-max-cost", "nan"}, "--attempt-max-cost: must be a number of at least 0, not 'nan'"},
      {{"--temperature", "-1"}, "--temperature: must be a number of at least 0, not '-1'"},
      {{"--max-tokens", "0"}, "--max-tokens: must be a number of at least 1, not '0'"},
      {{"--command-timeout", "0"}, "--command-timeout: must be a number above 0, not '0'"},
      {{"--reasoning-effort", "extreme"}, "--reasoning-effort: must be one of minimal, low, medium, high, not 'extreme'"},
  };
  for (const auto& [extra, line] : cases) {
    SCOPED_TRACE(extra[0] + " " + extra[1]);
    for (const char* command : {"bench", "generate"}) {
      std::vector<std::string> a = {command, "--model", "vllm:qwen-local", "--compile-only", "--attempt-max-cost", "0",
                                    "--max-cost", "0"};
      if (std::string(command) == "generate")  // generate's --max-cost is the attempt's
        a = {command, "--model", "vllm:qwen-local", "--problem", "collectives/all_gather", "--compile-only",
             "--max-cost", "0"};
      if (std::string(command) == "generate" && extra[0] == "--attempt-max-cost") continue;
      a.insert(a.end(), extra.begin(), extra.end());
      test::CliResult r = test::run_mgk(a, env());
      EXPECT_EQ(r.exit_code, 64) << command << ": " << r.output;
      EXPECT_NE(r.output.find(line), std::string::npos) << command << ": " << r.output;
    }
  }
  EXPECT_EQ(runs(), 0u);
  EXPECT_EQ(server_.request_count(), 0u);
}

// The flag the refusal names runs the model; a resume may then change the limits (the
// attempts stay the same benchmark) and says so, where it refuses a changed temperature.
// The provider refuses the first session's calls, so the run has attempts to continue.
TEST_F(BenchPreflight, TheNamedFlagRunsItAndAResumeMayChangeTheLimits) {
  std::atomic<bool> refuse{true};
  server_.respond_with([&](const test::RecordedRequest& r) {
    if (refuse)
      return test::ScriptedResponse::json(400, {{"error", {{"message", "scripted refusal"}, {"type", "invalid_request_error"}}}});
    return suite_response(r);
  });
  test::CliResult r = test::run_mgk(args({"--attempt-max-cost", "0", "--samples", "2"}), env());
  EXPECT_NE(r.exit_code, 64) << r.output;
  ASSERT_EQ(runs(), 1u) << r.output;
  const size_t refused = server_.request_count();
  EXPECT_GE(refused, 2u);
  refuse = false;

  test::CliResult priced = test::run_mgk({"bench", "--resume", "1", "--retry-failed", "--attempt-max-cost", "2"}, env());
  EXPECT_EQ(priced.exit_code, 64) << "a limit on the unpriced model, on resume too: " << priced.output;
  EXPECT_NE(priced.output.find("pass --attempt-max-cost 0"), std::string::npos) << priced.output;
  EXPECT_EQ(priced.output.find("continues with"), std::string::npos) << "a refused resume changes nothing: " << priced.output;

  test::CliResult hotter = test::run_mgk({"bench", "--resume", "1", "--temperature", "0.7"}, env());
  EXPECT_EQ(hotter.exit_code, 64) << hotter.output;
  EXPECT_NE(hotter.output.find("run 1 has --temperature null; leave --temperature out to resume it"), std::string::npos)
      << hotter.output;
  EXPECT_EQ(server_.request_count(), refused) << "nothing called on a refusal";

  test::CliResult more = test::run_mgk({"bench", "--resume", "1", "--retry-failed", "--max-tokens", "2048"}, env());
  EXPECT_EQ(more.exit_code, 0) << more.output;
  EXPECT_NE(more.output.find("run 1 continues with --max-tokens 16384 -> 2048 (for the calls still to come"),
            std::string::npos)
      << more.output;
  EXPECT_EQ(server_.request_count(), refused + 2);
  store::Store s = store::Store::open_read_only(db());
  EXPECT_EQ(s.run(1)->args["max_tokens"], 2048) << "the next resume starts from the limits taken";
  EXPECT_EQ(s.run(1)->args["attempt_max_cost_usd"], 0);
  for (const auto& at : s.attempts_of_run(1)) EXPECT_EQ(at.status, store::Status::kDone);

  // Its cost is unknown, never $0: stored as NULL, "$?" on screen, null in JSON, empty with
  // a note in CSV.
  EXPECT_EQ(s.run(1)->cost_usd, std::nullopt);
  for (const auto& at : s.attempts_of_run(1)) EXPECT_EQ(at.cost_usd, std::nullopt) << at.id;
  EXPECT_NE(more.output.find(", $?)"), std::string::npos) << "the progress line: " << more.output;
  EXPECT_EQ(more.output.find("$0.00"), std::string::npos) << more.output;
  for (const std::vector<std::string>& view : {std::vector<std::string>{"history"},
                                               std::vector<std::string>{"history", "--runs"},
                                               std::vector<std::string>{"report", "1"}}) {
    test::CliResult r = test::run_mgk(view, env());
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("$?"), std::string::npos) << view[0] << ": " << r.output;
    EXPECT_EQ(r.output.find("$0"), std::string::npos) << view[0] << ": " << r.output;
  }
  test::CliResult json = test::run_mgk({"report", "1", "--format", "json"}, env());
  EXPECT_TRUE(json.json()["runs"][0]["metrics"]["total"]["cost_usd"].is_null()) << json.output;
  test::CliResult csv = test::run_mgk({"report", "1", "--format", "csv"}, env());
  EXPECT_NE(csv.output.find(",suite,all,,total_cost_usd,,,,unknown: no price\n"), std::string::npos) << csv.output;
}

}  // namespace
}  // namespace mgk::bench_run::testing
