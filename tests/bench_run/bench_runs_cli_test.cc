// Finding and reading runs as a user does, over one small bench run against the scripted
// model (--compile-only, no GPU): --problems as a list, repeated and from a file;
// `history --problem` with the same syntax, `history --runs`, `show --run` of a bench run,
// and `report` of a subset, to standard output, of an eval run and of no run.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "common/file.h"
#include "scripted_suite.h"
#include "store/store.h"
#include "support/mgk_cli.h"
#include "support/test_paths.h"

namespace mgk::bench_run::testing {
namespace {

class BenchRunsCli : public ::testing::Test {
 protected:
  BenchRunsCli() {
    server_.respond_with([](const test::RecordedRequest& r) { return suite_response(r); });
    std::ofstream(dir_.path() / "config.json") << R"({"prices": {"gpt-test": {"input": 100, "output": 100}}})";
  }
  std::map<std::string, std::string> env() {
    return {{"MGK_HOME", (dir_.path() / "home").string()},
            {"MGK_DB", (dir_.path() / "a.db").string()},
            {"MGK_CONFIG", (dir_.path() / "config.json").string()},
            {"OPENAI_API_KEY", "sk-test-bench"},
            {"OPENAI_BASE_URL", server_.url() + "/v1"}};
  }
  // Run 1: three problems named three ways.
  void bench_three() {
    const auto file = dir_.path() / "subset.txt";
    std::ofstream(file) << "# one more\nbroadcast\n";
    test::CliResult r = test::run_mgk({"bench", "--model", "openai:gpt-test", "--problems", "collectives/all_gather",
                                       "--problems", "all_reduce,collectives/all_gather", "--problems-file",
                                       file.string(), "--turns", "1", "--compile-only"},
                                      env());
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }

  test::TempDir dir_{"mgk-bench-runs"};
  test::ScriptedServer server_;
};

TEST_F(BenchRunsCli, ProblemsAsAListRepeatedAndFromAFileAndTheSameSyntaxInHistoryAndReport) {
  bench_three();
  store::Store s = store::Store::open_read_only(dir_.path() / "a.db");
  EXPECT_EQ(s.run(1)->args["problem_list"],
            (std::vector<std::string>{"collectives/all_gather", "collectives/all_reduce", "collectives/broadcast"}));
  EXPECT_EQ(s.attempts_of_run(1).size(), 3u);

  test::CliResult h = test::run_mgk({"history", "--problem", "all_gather,collectives/broad*"}, env());
  EXPECT_EQ(h.exit_code, 0) << h.output;
  EXPECT_NE(h.output.find("collectives/all_gather"), std::string::npos) << h.output;
  EXPECT_NE(h.output.find("collectives/broadcast"), std::string::npos) << h.output;
  EXPECT_EQ(h.output.find("collectives/all_reduce"), std::string::npos) << h.output;

  test::CliResult rep = test::run_mgk({"report", "1", "--problems", "all_gather", "--problems", "broadcast",
                                       "--format", "json"},
                                      env());
  ASSERT_EQ(rep.exit_code, 0) << rep.output;
  EXPECT_EQ(rep.json()["runs"][0]["metrics"]["finished"], 2) << rep.output;
  test::CliResult whole = test::run_mgk({"report", "1", "--format", "json"}, env());
  EXPECT_EQ(whole.json()["runs"][0]["metrics"]["finished"], 3) << whole.output;
  // --json as every other command has it: the same document.
  test::CliResult flag = test::run_mgk({"report", "1", "--json"}, env());
  ASSERT_EQ(flag.exit_code, 0) << flag.output;
  EXPECT_EQ(flag.json(), whole.json());
  test::CliResult both = test::run_mgk({"report", "1", "--json", "--format", "csv"}, env());
  EXPECT_EQ(both.exit_code, 64) << both.output;
  // A paper's table: the leaderboard as LaTeX; several runs (here the same one twice) side by side.
  test::CliResult tex = test::run_mgk({"report", "1", "1", "--format", "tex"}, env());
  ASSERT_EQ(tex.exit_code, 0) << tex.output;
  EXPECT_NE(tex.output.find("% mgk bench leaderboard: runs 1, 1"), std::string::npos) << tex.output;
  EXPECT_NE(tex.output.find("1 & openai:gpt-test & refine & 3 & "), std::string::npos) << tex.output;
  // For CI: two of the three compiled (compiles@1 = 66.7%), none ran (pass@1 unknown).
  test::CliResult met = test::run_mgk({"report", "1", "--fail-under", "compiles@1=60%"}, env());
  EXPECT_EQ(met.exit_code, 0) << met.output;
  test::CliResult unknown = test::run_mgk({"report", "1", "--fail-under", "compiles@1=0.5", "--fail-under", "pass@1=0.1"},
                                          env());
  EXPECT_EQ(unknown.exit_code, 1) << unknown.output;
  EXPECT_NE(unknown.output.find("mgk: run 1 fails --fail-under: pass@1 is unknown: 2 problem(s) not run"),
            std::string::npos)
      << unknown.output;
  EXPECT_EQ(unknown.output.find("compiles@1 is"), std::string::npos) << unknown.output;
  test::CliResult under = test::run_mgk({"report", "1", "--fail-under", "compiles@1=0.7"}, env());
  EXPECT_EQ(under.exit_code, 1) << under.output;
  EXPECT_NE(under.output.find("compiles@1 is 66.7%, under 70.0%"), std::string::npos) << under.output;
  test::CliResult bad = test::run_mgk({"report", "1", "--fail-under", "pass@1>0.5"}, env());
  EXPECT_EQ(bad.exit_code, 64) << bad.output;
  EXPECT_NE(bad.output.find("expected METRIC=VALUE"), std::string::npos) << bad.output;
}

// A named run: `mgk report NAME` finds it, titles and `history --runs` show it, one run per
// name, a resume may rename it.
TEST_F(BenchRunsCli, ANamedRunIsFoundByItsNameAndNamesAreUnique) {
  const std::vector<std::string> bench = {"bench", "--model", "openai:gpt-test", "--problems", "collectives/all_gather",
                                          "--turns", "1", "--compile-only"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = bench;
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  test::CliResult first = test::run_mgk(with({"--name", "baseline"}), env());
  ASSERT_EQ(first.exit_code, 0) << first.output;
  test::CliResult by_name = test::run_mgk({"report", "baseline"}, env());
  ASSERT_EQ(by_name.exit_code, 0) << by_name.output;
  EXPECT_NE(by_name.output.find("mgk bench report: run 1 'baseline' (openai:gpt-test"), std::string::npos)
      << by_name.output;
  test::CliResult runs = test::run_mgk({"history", "--runs"}, env());
  EXPECT_NE(runs.output.find("NAME"), std::string::npos) << runs.output;
  EXPECT_NE(runs.output.find("baseline"), std::string::npos) << runs.output;

  test::CliResult taken = test::run_mgk(with({"--new", "--name", "baseline"}), env());
  EXPECT_EQ(taken.exit_code, 64) << taken.output;
  EXPECT_NE(taken.output.find("run 1 is already named 'baseline'"), std::string::npos) << taken.output;
  test::CliResult number = test::run_mgk(with({"--new", "--name", "42"}), env());
  EXPECT_EQ(number.exit_code, 64) << number.output;

  test::CliResult renamed = test::run_mgk({"bench", "--resume", "1", "--name", "first-try"}, env());
  EXPECT_EQ(renamed.exit_code, 0) << renamed.output;
  EXPECT_EQ(test::run_mgk({"report", "first-try", "--json"}, env()).exit_code, 0);
  test::CliResult gone = test::run_mgk({"report", "baseline"}, env());
  EXPECT_EQ(gone.exit_code, 5) << gone.output;
  EXPECT_NE(gone.output.find("no bench run is named 'baseline'"), std::string::npos) << gone.output;
}

// A finished run grows its samples on a resume (n = 1 -> 2): the attempts done are kept and
// the new ones run; a resume never drops samples.
TEST_F(BenchRunsCli, AResumeWithMoreSamplesGrowsTheRunKeepingWhatIsDone) {
  test::CliResult first = test::run_mgk({"bench", "--model", "openai:gpt-test", "--problems", "collectives/all_gather",
                                         "--samples", "1", "--turns", "1", "--compile-only"},
                                        env());
  ASSERT_EQ(first.exit_code, 0) << first.output;
  const size_t calls = server_.request_count();
  test::CliResult grown = test::run_mgk({"bench", "--resume", "1", "--samples", "2"}, env());
  ASSERT_EQ(grown.exit_code, 0) << grown.output;
  EXPECT_NE(grown.output.find("run 1 grows from 1 to 2 samples a problem (the attempts done are kept)"),
            std::string::npos)
      << grown.output;
  EXPECT_EQ(server_.request_count(), calls + 1) << "one new attempt of one turn, the first not run again";
  store::Store s = store::Store::open_read_only(dir_.path() / "a.db");
  const auto attempts = s.attempts_of_run(1);
  ASSERT_EQ(attempts.size(), 2u);
  EXPECT_EQ(attempts[0].sample, 0);
  EXPECT_EQ(attempts[1].sample, 1);
  EXPECT_EQ(test::run_mgk({"report", "1", "--json"}, env()).json()["runs"][0]["metrics"]["samples"], 2);
  test::CliResult fewer = test::run_mgk({"bench", "--resume", "1", "--samples", "1"}, env());
  EXPECT_EQ(fewer.exit_code, 64) << fewer.output;
  EXPECT_NE(fewer.output.find("a resume may add samples (--samples 3 or more), not drop them"), std::string::npos)
      << fewer.output;
}

TEST_F(BenchRunsCli, ARejudgeJudgesAStoredRunsKernelsAgainCallingNoModelIntoARunBesideIt) {
  test::CliResult first = test::run_mgk({"bench", "--model", "openai:gpt-test", "--problems",
                                         "collectives/all_gather,collectives/broadcast", "--turns", "2",
                                         "--compile-only"},
                                        env());
  ASSERT_EQ(first.exit_code, 0) << first.output;
  const size_t calls = server_.request_count();

  test::CliResult re = test::run_mgk({"bench", "--rejudge", "1", "--compile-only"}, env());
  ASSERT_EQ(re.exit_code, 0) << re.output;
  EXPECT_EQ(server_.request_count(), calls) << "no model call";
  EXPECT_NE(re.output.find("mgk bench run 2 (judging run 1 again)"), std::string::npos) << re.output;
  EXPECT_NE(re.output.find("side by side with the run judged: mgk report 1 2"), std::string::npos) << re.output;
  {
    store::Store s = store::Store::open_read_only(dir_.path() / "a.db");
    EXPECT_EQ(s.run(2)->args["rejudge_of"], 1);
    auto by_problem = [](std::vector<store::AttemptSummary> v) {  // attempts run concurrently
      std::sort(v.begin(), v.end(), [](const auto& x, const auto& y) { return x.problem < y.problem; });
      return v;
    };
    const auto olds = by_problem(s.attempts_of_run(1)), news = by_problem(s.attempts_of_run(2));
    ASSERT_EQ(news.size(), olds.size());
    for (size_t i = 0; i < news.size(); ++i) {
      EXPECT_EQ(news[i].problem, olds[i].problem);
      EXPECT_EQ(news[i].config["rejudge_of_attempt"], olds[i].id);
      EXPECT_EQ(news[i].turns, olds[i].turns);
      EXPECT_EQ(news[i].tokens_in, olds[i].tokens_in);
      const auto before = s.evaluations_of_attempt(olds[i].id), after = s.evaluations_of_attempt(news[i].id);
      ASSERT_EQ(after.size(), before.size()) << news[i].problem;
      for (size_t k = 0; k < after.size(); ++k) {
        EXPECT_EQ(after[k].turn_index, before[k].turn_index);
        EXPECT_EQ(after[k].kernel_hash, before[k].kernel_hash);
        EXPECT_EQ(after[k].verdict, before[k].verdict) << "the same checks, compiling only";
        EXPECT_NE(after[k].id, before[k].id);
      }
    }
  }
  test::CliResult side = test::run_mgk({"report", "1", "2", "--json"}, env());
  ASSERT_EQ(side.exit_code, 0) << side.output;
  EXPECT_EQ(side.json()["runs"].size(), 2u);
  EXPECT_EQ(side.json()["runs"][1]["provenance"]["rejudge_of"], 1) << side.output;
  test::CliResult text = test::run_mgk({"report", "2"}, env());
  EXPECT_NE(text.output.find("kernels of run 1 judged again, no model called"), std::string::npos) << text.output;

  test::CliResult again = test::run_mgk({"bench", "--rejudge", "1", "--compile-only"}, env());
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("run 2 judged run 1's kernels already"), std::string::npos) << again.output;
  test::CliResult resumed = test::run_mgk({"bench", "--resume", "2"}, env());
  EXPECT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_EQ(server_.request_count(), calls) << "a resume of a rejudge calls no model either";

  test::CliResult model = test::run_mgk({"bench", "--rejudge", "1", "--turns", "3"}, env());
  EXPECT_EQ(model.exit_code, 64) << model.output;
  EXPECT_NE(model.output.find("--turns is run 1's to say"), std::string::npos) << model.output;
  test::CliResult none = test::run_mgk({"bench", "--rejudge", "9"}, env());
  EXPECT_NE(none.exit_code, 0);
  EXPECT_NE(none.output.find("no bench run 9"), std::string::npos) << none.output;
}

// On the GPU machine: kernels written where nothing ran (--compile-only) get real verdicts
// from a rejudge, and the two runs are reported side by side (the output goes in the note).
TEST_F(BenchRunsCli, ACompileOnlyRunJudgedAgainOnTheGpuGetsRealVerdicts) {
  if (!test::gpus_available()) GTEST_SKIP() << "no GPU";
  const std::string problems = "collectives/all_gather,collectives/all_reduce,collectives/broadcast,"
                               "collectives/reduce_scatter,collectives/scatter";
  test::CliResult first = test::run_mgk(
      {"bench", "--model", "openai:gpt-test", "--problems", problems, "--turns", "2", "--compile-only"}, env());
  std::cout << first.output;
  ASSERT_EQ(first.exit_code, 0) << first.output;
  const size_t calls = server_.request_count();
  test::CliResult re =
      test::run_mgk({"bench", "--rejudge", "1", "--gpus", "0", "--jobs", "3", "--name", "judged-on-gpu"}, env(), 400);
  std::cout << re.output;
  ASSERT_EQ(re.exit_code, 0) << re.output;
  EXPECT_EQ(server_.request_count(), calls) << "no model call";
  const nlohmann::json j = test::run_mgk({"report", "1", "2", "--json"}, env()).json();
  std::map<std::string, std::string> before, after;
  for (const auto& [run, outcome] : {std::pair{0, &before}, std::pair{1, &after}})
    for (const auto& p : j["runs"][run]["problems"])
      for (const auto& a : p["attempts"]) (*outcome)[p["problem"]] = a["outcome"];
  for (const auto& [p, o] : before) EXPECT_TRUE(o == "compiled" || o == "refused" || o == "did_not_compile") << p << " " << o;
  for (const char* p : {"collectives/all_gather", "collectives/broadcast"}) EXPECT_EQ(after[p], "correct") << p;
  // The script's first all_reduce kernel has wrong values, and its attempt ended there (the
  // cost limit: at the test's price the second call's worst case is over the default $3):
  // "compiled" hid a wrong kernel that only a GPU could show.
  EXPECT_EQ(after["collectives/all_reduce"], "wrong");
  EXPECT_EQ(after["collectives/reduce_scatter"], "crash");
  EXPECT_EQ(after["collectives/scatter"], "refused");
  test::CliResult side = test::run_mgk({"report", "1", "judged-on-gpu"}, env());
  std::cout << side.output;
  EXPECT_EQ(side.exit_code, 0) << side.output;
}

TEST_F(BenchRunsCli, HistoryRunsListsEveryRunAndShowRunOfABenchRunIsATableOfItsAttempts) {
  bench_three();
  test::CliResult runs = test::run_mgk({"history", "--runs"}, env());
  ASSERT_EQ(runs.exit_code, 0) << runs.output;
  for (const char* part : {"RUN  WHEN (UTC)", "KIND   MODEL", "PROBLEMS", "STATUS", "PASS@1", "bench  openai:gpt-test",
                           "3 x 1", "done", "not run", "'mgk report RUN' for a bench run"})
    EXPECT_NE(runs.output.find(part), std::string::npos) << part << "\n" << runs.output;
  test::CliResult json = test::run_mgk({"history", "--runs", "--json"}, env());
  ASSERT_EQ(json.exit_code, 0) << json.output;
  const nlohmann::json j = nlohmann::json::parse(json.output);
  ASSERT_EQ(j.size(), 1u) << json.output;
  EXPECT_EQ(j[0]["kind"], "bench");

  test::CliResult attempts = test::run_mgk({"history"}, env());
  EXPECT_NE(attempts.output.find("ID  RUN  WHEN (UTC)"), std::string::npos) << attempts.output;

  test::CliResult show = test::run_mgk({"show", "--run", "1"}, env());
  ASSERT_EQ(show.exit_code, 0) << show.output;
  EXPECT_EQ(show.output.find("summary  {"), std::string::npos) << "no raw JSON line: " << show.output;
  for (const char* part : {"run 1: bench with openai:gpt-test", "ID  RUN  WHEN (UTC)", "collectives/all_reduce",
                           "collectives/broadcast", "'mgk report 1' shows the run's pass@k"})
    EXPECT_NE(show.output.find(part), std::string::npos) << part << "\n" << show.output;
}

TEST_F(BenchRunsCli, ReportToStandardOutputOfAnEvalRunAndOfNoRun) {
  bench_three();
  test::CliResult html = test::run_mgk({"report", "1", "--format", "html", "-o", "-"}, env());
  ASSERT_EQ(html.exit_code, 0) << html.output.substr(0, 400);
  EXPECT_NE(html.output.find("<html"), std::string::npos);
  EXPECT_EQ(html.output.find("wrote -"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists("-"));

  const auto kernel = test::source_dir() / "problems/collectives/all_reduce/expert.cu";
  test::CliResult eval = test::run_mgk({"eval", "collectives/all_reduce", kernel.string(), "--compile-only"}, env());
  ASSERT_EQ(eval.exit_code, 0) << eval.output;
  test::CliResult of_eval = test::run_mgk({"report", "2"}, env());
  EXPECT_EQ(of_eval.exit_code, 64) << of_eval.output;
  EXPECT_NE(of_eval.output.find("mgk: error: run 2 is an eval run; 'mgk report' reads bench runs ('mgk show --run 2' "
                                "shows this one)"),
            std::string::npos)
      << of_eval.output;
  test::CliResult none = test::run_mgk({"report", "9"}, env());
  EXPECT_EQ(none.exit_code, 5) << none.output;
  EXPECT_NE(none.output.find("no run 9 in"), std::string::npos) << none.output;
}

}  // namespace
}  // namespace mgk::bench_run::testing
