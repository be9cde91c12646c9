// Reports built from a real SQLite store written through the Store API: what each attempt
// came to, that a turn evaluated twice counts once, that the report does not depend on the
// order attempts were written in, and the numbers each format carries.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>

#include "common/error.h"

#include "report/bench_report.h"
#include "report/bench_store.h"
#include "report/leaderboard.h"
#include "report/render_data.h"
#include "report/render_text.h"
#include "support/test_paths.h"

namespace mgk::report {
namespace {

using namespace test;
using results::Verdict;

class ReportStore : public ::testing::Test {
 protected:
  mgk::test::TempDir dir_{"mgk-report"};
  store::Store store_ = store::Store::open(dir_.path() / "mgk.db");
};

TEST_F(ReportStore, ATurnEvaluatedTwiceCountsOnceTheLaterEvaluationStands) {
  const int64_t run = begin_bench_run(store_, 1);
  // Killed after storing turn 0's evaluation but before the turn itself ...
  const int64_t id = record_attempt(store_, run, "collectives/all_reduce", 0, {}, store::Status::kRunning);
  const std::string first = store_.put_kernel("int broken(");
  auto e = store::EvaluationRecord::from_result(verdict(Verdict::kCompileError).to_json(), first);
  e.attempt_id = id;
  e.turn_index = 0;
  store_.record_evaluation(e);
  // ... then resumed: turn 0 answered again, judged again, stored.
  const std::string second = store_.put_kernel(register_kernel("v2"));
  store::TurnRecord t;
  t.attempt_id = id;
  t.index = 0;
  t.action = "kernel";
  t.kernel_hash = second;
  store_.record_turn(t);
  results::EvalResult ok = timed_correct(1.5, 1.2);
  ok.problem = "collectives/all_reduce";
  auto e2 = store::EvaluationRecord::from_result(ok.to_json(), second);
  e2.attempt_id = id;
  e2.turn_index = 0;
  store_.record_evaluation(e2);
  store_.finish_attempt(id, {store::Status::kDone, "turns_exhausted", second});

  AttemptData data = load_attempt(store_, id);
  ASSERT_EQ(data.evaluations.size(), 1u);
  EXPECT_EQ(data.evaluations[0].verdict, "correct");
  AttemptResult r = classify(data);
  EXPECT_EQ(r.outcome, Outcome::kCorrect);
  EXPECT_DOUBLE_EQ(*r.speedup, 1.2);
  ASSERT_EQ(r.turn_verdicts.size(), 1u);
  EXPECT_EQ(r.turn_verdicts[0].verdict, "correct");
}

TEST_F(ReportStore, EachAttemptTakesTheFurthestItsKernelsGot) {
  const int64_t run = begin_bench_run(store_, 1);
  auto outcome_of = [&](const std::vector<ScriptTurn>& turns, store::Status status = store::Status::kDone,
                        const std::string& exit = "turns_exhausted") {
    static int n = 0;
    return classify(load_attempt(store_, record_attempt(store_, run, "p/x" + std::to_string(n++), 0, turns, status, exit)))
        .outcome;
  };
  EXPECT_EQ(outcome_of({kernel_turn("a", verdict(Verdict::kCompileError)), kernel_turn("b", verdict(Verdict::kIncorrect))}),
            Outcome::kWrong);
  EXPECT_EQ(outcome_of({kernel_turn("c", verdict(Verdict::kTimeout)), kernel_turn("d", verdict(Verdict::kCompileError))}),
            Outcome::kHang);
  EXPECT_EQ(outcome_of({kernel_turn("e", verdict(Verdict::kRuntimeError))}), Outcome::kCrash);
  EXPECT_EQ(outcome_of({kernel_turn("f", verdict(Verdict::kCompileError, "does not compile: kernel.cu(3): error"))}),
            Outcome::kDidNotCompile);
  EXPECT_EQ(outcome_of({kernel_turn("g", verdict(Verdict::kCompileError,
                                                 "refused before compiling: line 3: 'ncclAllReduce': candidates may "
                                                 "not call NCCL"))}),
            Outcome::kRefused);
  EXPECT_EQ(outcome_of({prose_turn(), prose_turn(), prose_turn()}, store::Status::kDone, "format_errors"),
            Outcome::kNoKernel);
  EXPECT_EQ(outcome_of({}, store::Status::kFailed, "api_error"), Outcome::kInfrastructure);
  EXPECT_EQ(outcome_of({kernel_turn("h", verdict(Verdict::kInfrastructure))}), Outcome::kInfrastructure);
  EXPECT_EQ(outcome_of({kernel_turn("i", verdict(Verdict::kCompiled))}), Outcome::kCompiled);
  EXPECT_EQ(outcome_of({kernel_turn("j", timed_correct(1, 1))}, store::Status::kRunning), Outcome::kUnfinished);
  EXPECT_EQ(outcome_of({kernel_turn("k", timed_correct(1, 1))}, store::Status::kInterrupted, "interrupted"),
            Outcome::kUnfinished);
}

TEST_F(ReportStore, TheBestCorrectKernelIsTheFastestAndItsSourceGivesTheDesign) {
  const int64_t run = begin_bench_run(store_, 1);
  const int64_t id = record_attempt(store_, run, "collectives/all_gather", 0,
                                    {kernel_turn(register_kernel("slow"), timed_correct(1.2, 1.4, 0.3)),
                                     kernel_turn(copy_engine_kernel("fast"), timed_correct(2.0, 1.8, 0.6)),
                                     kernel_turn("int x(", verdict(Verdict::kCompileError))});
  AttemptResult r = classify(load_attempt(store_, id));
  EXPECT_EQ(r.outcome, Outcome::kCorrect);
  EXPECT_TRUE(r.timed);
  EXPECT_DOUBLE_EQ(*r.speedup, 1.8);  // the slowest size of the fastest kernel
  EXPECT_DOUBLE_EQ(*r.roofline_fraction, 0.6);
  EXPECT_EQ(*r.kernel_hash, sha256_of(copy_engine_kernel("fast")));
  ASSERT_TRUE(r.features);
  EXPECT_EQ(r.features->transfer, std::vector<std::string>{"copy_engine"});
  EXPECT_EQ(r.turns, 3);
  EXPECT_EQ(r.tokens_in, 1000 + 2000 + 3000);
  EXPECT_DOUBLE_EQ(r.wall_s, 3 * 2.0 + 4 + 4 + 1.5);  // latencies, then evaluation (or compile) times
}

TEST_F(ReportStore, ACorrectKernelFromRanksSharingAGpuIsNotTimed) {
  const int64_t run = begin_bench_run(store_, 1);
  const int64_t id = record_attempt(store_, run, "collectives/broadcast", 0,
                                    {kernel_turn(register_kernel("shared"), shared_correct(4))});
  AttemptResult r = classify(load_attempt(store_, id));
  EXPECT_EQ(r.outcome, Outcome::kCorrect);
  EXPECT_FALSE(r.timed);
  EXPECT_FALSE(r.speedup);
  EXPECT_EQ(r.not_timed_because, "ranks shared a GPU");
  // The store keeps the first correct kernel as the attempt's best even without a speedup.
  EXPECT_EQ(*store_.attempt(id)->best_kernel_hash, sha256_of(register_kernel("shared")));

  RunReport rep = build_report(store_, run);
  EXPECT_EQ(rep.metrics.timing, "checked, not timed: ranks shared a GPU");
  const std::string text = render_text({rep}, false);
  EXPECT_NE(text.find("not timed"), std::string::npos) << text;
  EXPECT_NE(text.find("100.0%"), std::string::npos) << text;  // pass@1
}

// Two samples of two problems, written in one order or the other (and, in the second
// store, with a turn judged twice as a killed-and-resumed run leaves it).
void write_run(store::Store& s, bool reversed) {
  const int64_t run = begin_bench_run(s, 2);
  std::vector<std::function<void()>> writes = {
      [&] { record_attempt(s, run, "collectives/all_reduce", 0, {kernel_turn(register_kernel("a"), timed_correct(1.5, 1.25, 0.4))}); },
      [&] { record_attempt(s, run, "collectives/all_reduce", 1, {kernel_turn("int y(", verdict(Verdict::kCompileError)), kernel_turn(register_kernel("b"), verdict(Verdict::kIncorrect))}); },
      [&] { record_attempt(s, run, "tp/ag_gemm", 0, {prose_turn(), kernel_turn(copy_engine_kernel("c"), timed_correct(0.9, 0.8, 0.2))}); },
      [&] { record_attempt(s, run, "tp/ag_gemm", 1, {kernel_turn(copy_engine_kernel("d"), verdict(Verdict::kTimeout))}); },
  };
  if (reversed) std::reverse(writes.begin(), writes.end());
  for (auto& w : writes) w();
}

TEST_F(ReportStore, TheReportDependsOnTheResultsNotOnTheOrderTheyWereStored) {
  write_run(store_, false);
  store::Store other = store::Store::open(dir_.path() / "other.db");
  other.begin_run({"generate", "x", {}});  // so the run ids differ too
  write_run(other, true);
  nlohmann::json a = report_json({build_report(store_, 1)}), b = report_json({build_report(other, 2)});
  EXPECT_NE(a, b) << "the run's ids and times differ";
  EXPECT_EQ(without_run_dependent_fields(a), without_run_dependent_fields(b));
}

TEST_F(ReportStore, JsonCsvAndTextCarryTheNumbers) {
  write_run(store_, false);
  RunReport rep = build_report(store_, 1, {1.25});
  const nlohmann::json j = report_json({rep});
  const nlohmann::json& m = j["runs"][0]["metrics"];
  // pass@1: all_reduce 1/2, ag_gemm 1/2; pass@2: both 1.
  EXPECT_DOUBLE_EQ(m["suite"]["pass_at_k"][0]["value"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(m["suite"]["pass_at_k"][1]["value"].get<double>(), 1.0);
  // With its 95% bootstrap interval: two problems of two samples each say little.
  const nlohmann::json& ci = m["suite"]["pass_at_k"][0]["ci95"];
  ASSERT_TRUE(ci.is_array() && ci.size() == 2) << ci;
  EXPECT_LE(ci[0].get<double>(), 0.5);
  EXPECT_GE(ci[1].get<double>(), 0.5);
  EXPECT_TRUE(m["suite"]["pass_at_k"][0].contains("problems"));
  ASSERT_TRUE(m["per_turn"].is_array() && !m["per_turn"].empty()) << m["per_turn"];
  EXPECT_EQ(m["per_turn"][0]["turn"], 1);
  EXPECT_TRUE(m["per_turn"].back().contains("pass_at_1"));
  EXPECT_EQ(m["thresholds"], nlohmann::json({0.0, 1.0, 1.25, 1.5, 2.0}));
  // fast_1@1: only all_reduce sample 0 (1.25x) is faster than 1: (1/2 + 0) / 2.
  EXPECT_DOUBLE_EQ(m["suite"]["fast_p_at_k"][1]["at_k"][0]["value"].get<double>(), 0.25);
  // fast_1.25: 1.25 is not > 1.25.
  EXPECT_DOUBLE_EQ(m["suite"]["fast_p_at_k"][2]["at_k"][0]["value"].get<double>(), 0.0);
  EXPECT_NEAR(m["speedup_geomean"].get<double>(), std::sqrt(1.25 * 0.8), 1e-12);
  EXPECT_DOUBLE_EQ(m["roofline_median"].get<double>(), 0.3);
  EXPECT_EQ(m["outcomes"]["correct"], 2);
  EXPECT_EQ(m["outcomes"]["wrong"], 1);
  EXPECT_EQ(m["outcomes"]["hang"], 1);
  EXPECT_EQ(m["categories"].size(), 2u);
  const nlohmann::json& problems = j["runs"][0]["problems"];
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_EQ(problems[0]["problem"], "collectives/all_reduce");
  EXPECT_EQ(problems[0]["attempts"][1]["turn_verdicts"][0]["verdict"], "compile_error");

  const std::string csv = render_csv({rep});
  EXPECT_EQ(csv.substr(0, csv.find('\n')), "run,scope,name,sample,metric,k,p,value,note");
  EXPECT_NE(csv.find("\n1,suite,all,,pass_at_k,1,,0.5,2 problem(s)\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\n1,suite,all,,fast_p_at_k,1,1,0.25,2 problem(s)\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\n1,attempt,tp/ag_gemm,1,outcome,,,hang,turns_exhausted\n"), std::string::npos) << csv;

  const std::string md = render_text({rep}, true);
  EXPECT_NE(md.find("| run 1 | all | 2 | 50.0% [0–100] | 100.0% [0–100] |"), std::string::npos) << md;
  EXPECT_NE(csv.find("\n1,suite,all,,pass_at_k_ci95_low,1,,0,bootstrap\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\n1,suite,all,,pass_at_1_by_turn,1,,"), std::string::npos) << csv;
  EXPECT_NE(md.find("## by turn"), std::string::npos) << md;
  EXPECT_NE(md.find("- outcomes of 4 counted attempt(s): correct 2, wrong 1, hang 1"), std::string::npos) << md;
}

TEST_F(ReportStore, AKeyStoredTwiceCountsOnceTheNewerAttempt) {
  const int64_t run = begin_bench_run(store_, 1);
  record_attempt(store_, run, "collectives/scatter", 0, {kernel_turn("a(", verdict(Verdict::kCompileError))});
  record_attempt(store_, run, "collectives/scatter", 0, {kernel_turn(register_kernel("s"), timed_correct(2, 2))});
  RunReport rep = build_report(store_, run);
  ASSERT_EQ(rep.results.size(), 1u);
  EXPECT_EQ(rep.results[0].outcome, Outcome::kCorrect);
}

// A size timed under the timing floor (faster than an empty kernel) is no speedup: the
// kernel has none, though its other size was 3x; it stays timed, so it is fast at no p and
// the suite's fast_p keeps its numbers (it does not turn "not timed").
TEST_F(ReportStore, AKernelTimedUnderTheFloorAtOneSizeIsFastAtNoP) {
  const int64_t run = begin_bench_run(store_, 1);
  record_attempt(store_, run, "p/good", 0, {kernel_turn("g", timed_correct(2.5, 2.5))});
  results::EvalResult under = timed_correct(3.0, 3.0);
  under.sizes[1].credible = false;
  under.sizes[1].speedup = 0;
  record_attempt(store_, run, "p/floor", 0, {kernel_turn("f", under)});
  RunReport rep = build_report(store_, run);
  ASSERT_EQ(rep.results.size(), 2u);
  const AttemptResult& f = rep.results[0].problem == "p/floor" ? rep.results[0] : rep.results[1];
  EXPECT_EQ(f.outcome, Outcome::kCorrect);
  EXPECT_TRUE(f.timed);
  EXPECT_FALSE(f.credible);
  EXPECT_FALSE(f.speedup) << "a speedup from the credible size alone: " << *f.speedup;
  EXPECT_EQ(no_speedup_because(f), "timed under the timing floor");
  EXPECT_EQ(rep.metrics.below_floor, 1);
  for (const FastP& fp : rep.metrics.suite.fast) {
    ASSERT_TRUE(fp.at_k[0].value) << "fast_" << fp.p << "@1 is unknown";
    EXPECT_DOUBLE_EQ(*fp.at_k[0].value, 0.5) << "p = " << fp.p << ": only p/good is fast";
  }
  // The store's own column says the same for new rows.
  auto e = store::EvaluationRecord::from_result(under.to_json(), "h");
  EXPECT_FALSE(e.speedup_min);
  const std::string text = render_text({rep}, false);
  EXPECT_NE(text.find("over 1 timed correct attempt(s)"), std::string::npos) << text;
  EXPECT_NE(text.find("1 more timed under the timing floor"), std::string::npos) << text;
}

// The evaluator failed after a wrong kernel (the agent stops there: status failed): the
// attempt says nothing of the model, so it is infrastructure, out of n, and the report
// says how to run it again. A correct kernel before the failure stands.
TEST_F(ReportStore, AnAttemptTheMachineCutShortIsInfrastructureAndOutOfEveryMetric) {
  const int64_t run = begin_bench_run(store_, 2);
  record_attempt(store_, run, "p/a", 0, {kernel_turn("a0", timed_correct(2, 2))});
  record_attempt(store_, run, "p/a", 1,
                 {kernel_turn("a1", verdict(Verdict::kIncorrect)), kernel_turn("a2", verdict(Verdict::kInfrastructure))},
                 store::Status::kFailed, "infrastructure");
  record_attempt(store_, run, "p/b", 0,
                 {kernel_turn("b0", timed_correct(2, 2)), kernel_turn("b1", verdict(Verdict::kInfrastructure))},
                 store::Status::kFailed, "infrastructure");
  record_attempt(store_, run, "p/b", 1, {kernel_turn("b2", verdict(Verdict::kIncorrect))});
  RunReport rep = build_report(store_, run);
  std::map<std::pair<std::string, int>, Outcome> got;
  for (const auto& r : rep.results) got[{r.problem, r.sample}] = r.outcome;
  EXPECT_EQ((got[{"p/a", 1}]), Outcome::kInfrastructure) << "its wrong first kernel is not its last word";
  EXPECT_EQ((got[{"p/b", 0}]), Outcome::kCorrect) << "a correct kernel stands";
  EXPECT_EQ(rep.metrics.infrastructure, 1);
  EXPECT_EQ(rep.metrics.finished, 3);
  // p/a: n = 1, c = 1; p/b: n = 2, c = 1. pass@1 = (1 + 0.5) / 2; pass@2 only p/b (1 of 2).
  ASSERT_TRUE(rep.metrics.suite.pass[0].value);
  EXPECT_DOUBLE_EQ(*rep.metrics.suite.pass[0].value, 0.75);
  EXPECT_EQ(rep.metrics.suite.pass[1].problems, 1);
  const std::string text = render_text({rep}, false);
  EXPECT_NE(text.find("3 counted attempt(s), 1 cut short by the provider or the evaluator (infrastructure), not counted "
                      "('mgk bench --resume " + std::to_string(run) + " --retry-failed' runs that one again)"),
            std::string::npos)
      << text;
  // pass@2 averages one problem of the two, and the table says so.
  EXPECT_NE(text.find("100.0% (1/2)"), std::string::npos) << text;
  const nlohmann::json j = report_json({rep});
  EXPECT_EQ(j["runs"][0]["metrics"]["infrastructure"], 1);
}

// Several runs side by side: each measured on the problems every one has (a run's others
// left out, and said so in every format), a leaderboard row per run, LaTeX for a paper.
TEST_F(ReportStore, RunsSideBySideAreMeasuredOnTheProblemsTheyShareAsALeaderboard) {
  const int64_t a = begin_bench_run(store_, 1, "openai:gpt-a");
  record_attempt(store_, a, "collectives/all_reduce", 0, {kernel_turn(register_kernel("a1"), timed_correct(1.5, 2.5))});
  record_attempt(store_, a, "tp/ag_gemm", 0, {kernel_turn("a(", verdict(Verdict::kCompileError))});
  const int64_t b = begin_bench_run(store_, 1, "anthropic:model_b");
  record_attempt(store_, b, "collectives/all_reduce", 0, {kernel_turn(register_kernel("b1"), verdict(Verdict::kIncorrect))});
  record_attempt(store_, b, "tp/ag_gemm", 0, {kernel_turn(register_kernel("b2"), timed_correct(0.5, 0.9))});
  record_attempt(store_, b, "moe/extra", 0, {kernel_turn(register_kernel("b3"), timed_correct(3, 3))});
  const int64_t c = begin_bench_run(store_, 1, "openai:gpt-c");
  record_attempt(store_, c, "collectives/all_reduce", 0, {kernel_turn(register_kernel("c1"), timed_correct(1.1, 1.2))});
  record_attempt(store_, c, "tp/ag_gemm", 0, {kernel_turn(register_kernel("c2"), timed_correct(1.1, 1.3))});

  const std::vector<RunReport> runs = build_comparison(store_, {a, b, c});
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_TRUE(runs[0].left_out.empty());
  EXPECT_EQ(runs[1].left_out, (std::vector<std::string>{"moe/extra"}));
  for (const RunReport& r : runs) EXPECT_EQ(r.metrics.suite.problems, 2) << r.data.run.id;
  // Run b on the shared two: one correct of two (its moe/extra, 3x, does not count).
  EXPECT_DOUBLE_EQ(runs[1].metrics.suite.pass[0].value.value(), 0.5);

  const std::string text = render_text(runs, false);
  EXPECT_NE(text.find("leaderboard (each run on the problems every run has"), std::string::npos) << text;
  EXPECT_NE(text.find("compared on the 2 problem(s) every run has: 1 of this run's left out (moe/extra)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("run 3  openai:gpt-c       refine"), std::string::npos) << text;
  const nlohmann::json j = report_json(runs);
  EXPECT_EQ(j["runs"][1]["left_out"], nlohmann::json({"moe/extra"}));
  EXPECT_EQ(j["runs"][0]["left_out"], nlohmann::json::array());

  const std::string tex = render_tex(runs);
  EXPECT_NE(tex.find("\\begin{tabular}"), std::string::npos) << tex;
  EXPECT_NE(tex.find("% mgk bench leaderboard: runs 1, 2, 3; compared on the problems every run has (run 2 left out 1)"),
            std::string::npos)
      << tex;
  // pass@1 50% for a and b, 100% for c; fast_1@1: a (its slowest size 1.5x) and c; fast_2: none.
  EXPECT_NE(tex.find("2 & anthropic:model\\_b & refine & 2 & 50.0"), std::string::npos) << tex;
  EXPECT_NE(tex.find("3 & openai:gpt-c & refine & 2 & 100.0 & 100.0 & 0.0 & 100.0 & 0.02 \\\\"), std::string::npos) << tex;
  EXPECT_NE(tex.find("\\bottomrule\n\\end{tabular}\n"), std::string::npos) << tex;

  // A run alone is reported on all its problems; runs sharing none cannot be compared.
  EXPECT_TRUE(build_comparison(store_, {b})[0].left_out.empty());
  EXPECT_EQ(build_comparison(store_, {b})[0].metrics.suite.problems, 3);
  const int64_t d = begin_bench_run(store_, 1);
  record_attempt(store_, d, "sp/other", 0, {kernel_turn(register_kernel("d"), timed_correct(1, 1))});
  EXPECT_THROW(build_comparison(store_, {a, d}), UsageError);
}

TEST_F(ReportStore, AnUnknownRunIsNotFound) {
  EXPECT_THROW(build_report(store_, 42), NotFoundError);  // exit 5, as the README's table says
}

// The slowest-size rule hides a kernel that wins at one size and loses at another: the
// report shows each problem's fastest sample at every size, with the link bandwidth the
// problem's cost model gives (nccl-tests' busbw for a collective).
TEST_F(ReportStore, EachSizeOfTheFastestSampleIsShownWithItsLinkBandwidth) {
  const int64_t run = begin_bench_run(store_, 1);
  results::EvalResult wins_large = timed_correct(0.8, 2.5);
  for (auto& s : wins_large.sizes) s.link_bytes = s.size == "small" ? 2e6 : 2e9;
  record_attempt(store_, run, "collectives/all_reduce", 0, {kernel_turn(register_kernel("k"), wins_large)});
  RunReport rep = build_report(store_, run);
  ASSERT_EQ(rep.results.size(), 1u);
  const auto& sizes = rep.results[0].sizes;
  ASSERT_EQ(sizes.size(), 2u);
  EXPECT_EQ(sizes[0].size, "small");
  EXPECT_DOUBLE_EQ(*sizes[0].speedup, 0.8);
  EXPECT_DOUBLE_EQ(*sizes[1].kernel_us, 40.0);
  EXPECT_NEAR(*sizes[1].link_gbps, 2e9 / 40e-6 / 1e9, 1e-9);  // 50000 GB/s of a made-up size
  EXPECT_DOUBLE_EQ(*rep.results[0].speedup, 0.8) << "the headline keeps the slowest size";
  const std::string text = render_text({rep}, false);
  EXPECT_NE(text.find("per size"), std::string::npos) << text;
  EXPECT_NE(text.find("2.50x"), std::string::npos) << text;
  EXPECT_NE(text.find("0.80x"), std::string::npos) << text;
  const nlohmann::json j = report_json({rep});
  EXPECT_DOUBLE_EQ(j["runs"][0]["problems"][0]["attempts"][0]["sizes"][1]["speedup"].get<double>(), 2.5);
}

// Provenance, from what the rows hold: one value where the rows agree, every value where
// they differ (a run resumed on another machine), unknown where no row says.
TEST_F(ReportStore, ProvenanceSaysWhatTheRunWasMadeWithAndWhereRowsDisagree) {
  const int64_t run = begin_bench_run(store_, 1);
  results::EvalResult on_h200 = timed_correct(1.5, 1.2);
  on_h200.provenance = {{"mgk", "0.1.0"}, {"nvcc", "13.0 (V13.0.88)"}, {"gpu", "NVIDIA H200"}, {"gpus", 2},
                        {"nccl", "2.28.3"}, {"arch", "sm_90a"}, {"calibrated", true}};
  on_h200.isolation = "bubblewrap";
  results::EvalResult on_h100 = on_h200;
  on_h100.provenance["gpu"] = "NVIDIA H100 80GB HBM3";
  record_attempt(store_, run, "collectives/all_reduce", 0, {kernel_turn(register_kernel("a"), on_h200)});
  record_attempt(store_, run, "collectives/all_gather", 0, {kernel_turn(register_kernel("b"), on_h100)});
  RunReport rep = build_report(store_, run);
  const nlohmann::json p = report_json({rep})["runs"][0]["provenance"];
  EXPECT_EQ(p["nvcc"], "13.0 (V13.0.88)");
  EXPECT_EQ(p["isolation"], "bubblewrap");
  // In the order the attempts come: by problem (all_gather first).
  EXPECT_EQ(p["gpu"], nlohmann::json({"NVIDIA H100 80GB HBM3", "NVIDIA H200"}));
  EXPECT_EQ(p["problems"], 2);
  EXPECT_EQ(p["model"], "openai:gpt-test");
  EXPECT_TRUE(p["cuda_driver"].is_null()) << "no row says: unknown, not invented";
  const std::string text = render_text({rep}, false);
  EXPECT_NE(text.find("nvcc 13.0 (V13.0.88) for sm_90a"), std::string::npos) << text;
  EXPECT_NE(text.find("NVIDIA H100 80GB HBM3, NVIDIA H200 (the rows differ)"), std::string::npos) << text;
  EXPECT_NE(text.find("CUDA driver unknown"), std::string::npos) << text;
}

}  // namespace
}  // namespace mgk::report
