// The estimators against values computed by hand, and the rules of the metrics module: what
// a problem contributes, "not timed" and "not run" instead of invented numbers, categories,
// unfinished attempts, geometric means.
#include "report/metrics.h"

#include <gtest/gtest.h>

#include <cmath>

namespace mgk::report {
namespace {

TEST(Estimator, MatchesHandComputedBinomials) {
  // n = 5, c = 2: 1 - C(3,k)/C(5,k).
  EXPECT_DOUBLE_EQ(*unbiased_at_k(5, 2, 1), 1 - 3.0 / 5);    // 0.4
  EXPECT_DOUBLE_EQ(*unbiased_at_k(5, 2, 2), 1 - 3.0 / 10);   // 0.7
  EXPECT_DOUBLE_EQ(*unbiased_at_k(5, 2, 3), 1 - 1.0 / 10);   // 0.9
  EXPECT_DOUBLE_EQ(*unbiased_at_k(5, 2, 4), 1.0);            // n - c = 3 < k: every draw holds a correct one
  // n = 10, c = 3, k = 5: 1 - C(7,5)/C(10,5) = 1 - 21/252.
  EXPECT_NEAR(*unbiased_at_k(10, 3, 5), 1 - 21.0 / 252, 1e-12);
}

TEST(Estimator, EdgesNEqualsKNoneCorrectAllCorrect) {
  EXPECT_DOUBLE_EQ(*unbiased_at_k(4, 1, 4), 1.0);  // n = k: all samples drawn
  EXPECT_DOUBLE_EQ(*unbiased_at_k(4, 0, 4), 0.0);
  EXPECT_DOUBLE_EQ(*unbiased_at_k(4, 4, 4), 1.0);
  for (int k = 1; k <= 6; ++k) {
    EXPECT_DOUBLE_EQ(*unbiased_at_k(6, 0, k), 0.0) << "c = 0, k = " << k;
    EXPECT_DOUBLE_EQ(*unbiased_at_k(6, 6, k), 1.0) << "c = n, k = " << k;
  }
  EXPECT_DOUBLE_EQ(*unbiased_at_k(1, 1, 1), 1.0);
  EXPECT_DOUBLE_EQ(*unbiased_at_k(1, 0, 1), 0.0);
}

TEST(Estimator, IsUndefinedWhenKExceedsN) {
  EXPECT_FALSE(unbiased_at_k(2, 1, 3));  // n < k: not extrapolated
  EXPECT_FALSE(unbiased_at_k(0, 0, 1));
  EXPECT_FALSE(unbiased_at_k(3, 1, 0));
  EXPECT_FALSE(unbiased_at_k(3, 4, 1));  // c > n
}

TEST(Thresholds, AlwaysHoldZeroOneOneAndAHalfTwoPlusTheExtraOnes) {
  EXPECT_EQ(speedup_thresholds(), (std::vector<double>{0, 1, 1.5, 2}));
  EXPECT_EQ(speedup_thresholds({3, 1, 1.25}), (std::vector<double>{0, 1, 1.25, 1.5, 2, 3}));
}

AttemptResult attempt(const std::string& problem, int sample, Outcome o, std::optional<double> speedup = {},
                      bool timed = true) {
  AttemptResult r;
  r.problem = problem;
  r.category = category_of(problem);
  r.sample = sample;
  r.world_size = 2;
  r.outcome = o;
  if (o == Outcome::kCorrect) {
    r.timed = timed && speedup.has_value();
    r.speedup = r.timed ? speedup : std::nullopt;
    if (!r.timed) r.not_timed_because = "ranks shared a GPU";
  }
  r.tokens_in = 1000;
  r.tokens_out = 100;
  r.cost_usd = 0.5;
  r.wall_s = 10;
  return r;
}

const double kPs[] = {0, 1, 1.5, 2};
std::vector<double> ps() { return {std::begin(kPs), std::end(kPs)}; }

const AtK& fast_at(const GroupMetrics& g, double p, int k) {
  for (const FastP& f : g.fast)
    if (f.p == p) return f.at_k.at(size_t(k - 1));
  throw std::runtime_error("no p");
}

// tp/a: speedups 0.8, 1.2, 2.5 and one wrong sample; collectives/b: two correct, not timed.
std::vector<AttemptResult> two_problems() {
  return {attempt("tp/a", 0, Outcome::kCorrect, 0.8),        attempt("tp/a", 1, Outcome::kCorrect, 1.2),
          attempt("tp/a", 2, Outcome::kCorrect, 2.5),        attempt("tp/a", 3, Outcome::kWrong),
          attempt("collectives/b", 0, Outcome::kCorrect, {}, false),
          attempt("collectives/b", 1, Outcome::kCorrect, {}, false), attempt("collectives/b", 2, Outcome::kHang),
          attempt("collectives/b", 3, Outcome::kDidNotCompile)};
}

TEST(Metrics, FastPCountsCorrectSamplesFasterThanPWithTheSameEstimator) {
  const std::vector<AttemptResult> both = two_problems();
  std::vector<AttemptResult> only_a(both.begin(), both.begin() + 4);
  RunMetrics m = compute_metrics(only_a, 4, ps());
  ASSERT_EQ(m.problems.size(), 1u);
  EXPECT_DOUBLE_EQ(*m.suite.pass[0].value, 0.75);                     // c = 3 of 4
  EXPECT_DOUBLE_EQ(*fast_at(m.suite, 0, 1).value, 0.75);              // 0.8, 1.2, 2.5 > 0
  EXPECT_DOUBLE_EQ(*fast_at(m.suite, 1, 1).value, 0.5);               // 1.2, 2.5
  EXPECT_DOUBLE_EQ(*fast_at(m.suite, 2, 1).value, 0.25);              // 2.5
  EXPECT_DOUBLE_EQ(*fast_at(m.suite, 1.5, 2).value, 1 - 3.0 / 6);     // c = 1: 1 - C(3,2)/C(4,2)
  EXPECT_DOUBLE_EQ(*fast_at(m.suite, 1, 4).value, 1.0);
  EXPECT_NEAR(*m.speedup_geomean, std::cbrt(0.8 * 1.2 * 2.5), 1e-12);
  EXPECT_EQ(m.timing, "timed");
}

TEST(Metrics, ACorrectSampleNotTimedMakesFastPNotTimedNeverZero) {
  RunMetrics m = compute_metrics(two_problems(), 4, ps());
  ASSERT_EQ(m.problems.size(), 2u);
  const ProblemMetrics& b = m.problems[0];  // sorted: collectives/b first
  EXPECT_EQ(b.problem, "collectives/b");
  EXPECT_EQ(b.correct, 2);
  EXPECT_EQ(b.correct_not_timed, 2);
  EXPECT_DOUBLE_EQ(*b.pass[0].value, 0.5);  // correctness counts
  EXPECT_FALSE(b.fast[1].at_k[0].value);    // but there is no speedup to count
  EXPECT_FALSE(b.best_speedup);
  // The suite: pass@1 averages both problems; fast_p is not timed as a whole.
  EXPECT_DOUBLE_EQ(*m.suite.pass[0].value, (0.75 + 0.5) / 2);
  const AtK& f = fast_at(m.suite, 1, 1);
  EXPECT_FALSE(f.value);
  EXPECT_EQ(f.problems, 2);
  EXPECT_EQ(f.unknown, 1);
  EXPECT_EQ(m.correct_not_timed, 2);
  EXPECT_EQ(m.timing, "partly timed: 2 correct attempt(s) not timed");
  // The category of the timed problem alone still has its numbers.
  ASSERT_EQ(m.categories.size(), 2u);
  EXPECT_EQ(m.categories[1].name, "tp");
  EXPECT_DOUBLE_EQ(*fast_at(m.categories[1], 1, 1).value, 0.5);
  EXPECT_FALSE(fast_at(m.categories[0], 1, 1).value);
  // The geometric mean is over timed correct samples only.
  EXPECT_NEAR(*m.speedup_geomean, std::cbrt(0.8 * 1.2 * 2.5), 1e-12);
}

TEST(Metrics, UnfinishedAttemptsEnterNoMetricAndFewerSamplesThanKDoNotCount) {
  std::vector<AttemptResult> r = {attempt("x/one", 0, Outcome::kCorrect, 1.5), attempt("x/one", 1, Outcome::kUnfinished),
                                  attempt("x/two", 0, Outcome::kWrong), attempt("x/two", 1, Outcome::kCorrect, 3.0)};
  RunMetrics m = compute_metrics(r, 2, ps());
  EXPECT_EQ(m.finished, 3);
  EXPECT_EQ(m.unfinished, 1);
  EXPECT_EQ(m.outcomes.at(Outcome::kUnfinished), 1);
  EXPECT_EQ(m.problems[0].n, 1);
  // k = 1: both problems (1/1 and 1/2); k = 2: only x/two has two samples.
  EXPECT_DOUBLE_EQ(*m.suite.pass[0].value, (1.0 + 0.5) / 2);
  EXPECT_EQ(m.suite.pass[0].problems, 2);
  EXPECT_DOUBLE_EQ(*m.suite.pass[1].value, 1.0);
  EXPECT_EQ(m.suite.pass[1].problems, 1);
  // Totals count every attempt; the means per finished attempt and per solved problem.
  EXPECT_EQ(m.total.count, 4);
  EXPECT_DOUBLE_EQ(m.total.cost_usd.value(), 2.0);
  EXPECT_DOUBLE_EQ(m.per_attempt->cost_usd.value(), 0.5);
  EXPECT_EQ(m.solved, 2);
  EXPECT_DOUBLE_EQ(m.per_solved->cost_usd.value(), 1.0);
  EXPECT_DOUBLE_EQ(m.per_solved->wall_s, 20.0);
}

TEST(Metrics, OnlyCompiledSamplesLeavePassAtKNotRunButCountForCompilesAtK) {
  std::vector<AttemptResult> r = {attempt("c/a", 0, Outcome::kCompiled), attempt("c/a", 1, Outcome::kDidNotCompile),
                                  attempt("c/b", 0, Outcome::kRefused), attempt("c/b", 1, Outcome::kNoKernel)};
  RunMetrics m = compute_metrics(r, 2, ps());
  EXPECT_FALSE(m.suite.pass[0].value);
  EXPECT_EQ(m.suite.pass[0].unknown, 1);  // c/a; c/b has nothing that might be correct: 0
  EXPECT_DOUBLE_EQ(*m.problems[1].pass[0].value, 0.0);
  EXPECT_DOUBLE_EQ(*m.suite.compiled[0].value, (0.5 + 0.0) / 2);
  EXPECT_DOUBLE_EQ(*m.suite.compiled[1].value, (1.0 + 0.0) / 2);
  EXPECT_FALSE(fast_at(m.suite, 0, 1).value);
  EXPECT_EQ(m.timing, "compile only: nothing ran, nothing was checked or timed");
  EXPECT_TRUE(fast_p_curve(r, m).empty());
}

TEST(Metrics, RooflineIsTheMedianOverTimedCorrectSamples) {
  std::vector<AttemptResult> r = {attempt("p/a", 0, Outcome::kCorrect, 1.0), attempt("p/a", 1, Outcome::kCorrect, 2.0),
                                  attempt("p/b", 0, Outcome::kCorrect, 4.0)};
  r[0].roofline_fraction = 0.2;
  r[1].roofline_fraction = 0.6;
  r[2].roofline_fraction = 0.3;
  RunMetrics m = compute_metrics(r, 2, ps());
  EXPECT_DOUBLE_EQ(*m.roofline_median, 0.3);
  EXPECT_EQ(m.with_roofline, 3);
  EXPECT_DOUBLE_EQ(*m.problems[0].best_roofline_fraction, 0.6);
  EXPECT_DOUBLE_EQ(*m.problems[0].best_speedup, 2.0);
  EXPECT_NEAR(*m.speedup_geomean, 2.0, 1e-12);  // (1 * 2 * 4)^(1/3)
}

TEST(Metrics, TheThresholdCurveIsFastPAtOneAtEverySpeedupReached) {
  std::vector<AttemptResult> r = {attempt("p/a", 0, Outcome::kCorrect, 1.5), attempt("p/a", 1, Outcome::kWrong),
                                  attempt("p/b", 0, Outcome::kCorrect, 0.5), attempt("p/b", 1, Outcome::kCorrect, 3.0)};
  RunMetrics m = compute_metrics(r, 2, ps());
  auto curve = fast_p_curve(r, m);
  // p = 0: (1/2 + 2/2) / 2; after 0.5: (1/2 + 1/2) / 2; after 1.5: (0 + 1/2) / 2; after 3: 0.
  std::vector<std::pair<double, double>> expected = {{0, 0.75}, {0.5, 0.5}, {1.5, 0.25}, {3.0, 0.0}};
  EXPECT_EQ(curve, expected);
  EXPECT_DOUBLE_EQ(curve[2].second, *fast_at(m.suite, 1.5, 1).value);
}

TEST(Metrics, FeaturesAreCountedOverCorrectKernels) {
  std::vector<AttemptResult> r = {attempt("p/a", 0, Outcome::kCorrect, 1.5), attempt("p/b", 0, Outcome::kCorrect, 2.0),
                                  attempt("p/c", 0, Outcome::kWrong)};
  r[0].features = KernelFeatures{{"register"}, {}, {"flags"}};
  r[1].features = KernelFeatures{{"copy_engine", "register"}, {"streams"}, {"flags"}};
  r[2].features = KernelFeatures{{"tma"}, {}, {}};  // not correct: not counted
  RunMetrics m = compute_metrics(r, 1, ps());
  EXPECT_EQ(m.features.of, "correct kernels");
  EXPECT_EQ(m.features.kernels, 2);
  EXPECT_EQ(m.features.transfer.at("register"), 2);
  EXPECT_EQ(m.features.transfer.at("copy_engine"), 1);
  EXPECT_EQ(m.features.transfer.count("tma"), 0u);
  EXPECT_EQ(m.features.overlap.at("none"), 1);
  EXPECT_EQ(m.features.sync.at("flags"), 2);
}

// What the turns buy, by hand: a/x: sample 0 fails to compile, is wrong, then correct;
// sample 1 is correct at once; b/y never compiles. An attempt that stopped keeps its state.
TEST(PerTurn, PassAndCompilesAfterEachTurnAveragedOverProblems) {
  auto with_turns = [](AttemptResult r, std::vector<std::string> verdicts) {
    for (size_t i = 0; i < verdicts.size(); ++i)
      r.turn_verdicts.push_back({int(i + 1), "kernel", verdicts[i], "", std::nullopt, false});
    return r;
  };
  std::vector<AttemptResult> rs = {
      with_turns(attempt("a/x", 0, Outcome::kCorrect, 1.2), {"compile_error", "incorrect", "correct"}),
      with_turns(attempt("a/x", 1, Outcome::kCorrect, 1.1), {"correct"}),
      with_turns(attempt("b/y", 0, Outcome::kDidNotCompile), {"compile_error", "compile_error"}),
  };
  RunMetrics m = compute_metrics(rs, 2, speedup_thresholds());
  ASSERT_EQ(m.per_turn.size(), 3u);
  EXPECT_DOUBLE_EQ(*m.per_turn[0].pass, (0.5 + 0) / 2);
  EXPECT_DOUBLE_EQ(m.per_turn[0].compiles, (0.5 + 0) / 2);
  EXPECT_DOUBLE_EQ(*m.per_turn[1].pass, (0.5 + 0) / 2);
  EXPECT_DOUBLE_EQ(m.per_turn[1].compiles, (1.0 + 0) / 2);
  EXPECT_DOUBLE_EQ(*m.per_turn[2].pass, (1.0 + 0) / 2);
  EXPECT_DOUBLE_EQ(m.per_turn[2].compiles, (1.0 + 0) / 2);
  EXPECT_DOUBLE_EQ(*m.per_turn.back().pass, *m.suite.pass[0].value) << "the last turn is pass@1";
}

TEST(PerTurn, UnderCompileOnlyPassIsNotRunAndCompilesIsKnown) {
  AttemptResult r = attempt("a/x", 0, Outcome::kCompiled);
  r.turn_verdicts = {{1, "kernel", "compile_error", "", std::nullopt, false},
                     {2, "kernel", "compiled", "", std::nullopt, false}};
  RunMetrics m = compute_metrics({r}, 1, speedup_thresholds());
  ASSERT_EQ(m.per_turn.size(), 2u);
  EXPECT_FALSE(m.per_turn[1].pass);
  EXPECT_DOUBLE_EQ(m.per_turn[0].compiles, 0.0);
  EXPECT_DOUBLE_EQ(m.per_turn[1].compiles, 1.0);
}

// fast_1@1 by turn: a/x is correct but slower at turn 2 and faster at turn 3; b/y is faster
// at once. A correct kernel that was not timed (ranks shared a GPU) leaves it unknown.
TEST(PerTurn, FastOneAfterEachTurnAndUnknownWhereACorrectKernelWasNotTimed) {
  AttemptResult a = attempt("a/x", 0, Outcome::kCorrect, 1.5), b = attempt("b/y", 0, Outcome::kCorrect, 1.2);
  a.turn_verdicts = {{1, "kernel", "compile_error", "", std::nullopt, false},
                     {2, "kernel", "correct", "", 0.8, true},
                     {3, "kernel", "correct", "", 1.5, true}};
  b.turn_verdicts = {{1, "kernel", "correct", "", 1.2, true}};
  RunMetrics m = compute_metrics({a, b}, 1, speedup_thresholds());
  ASSERT_EQ(m.per_turn.size(), 3u);
  EXPECT_DOUBLE_EQ(*m.per_turn[0].fast1, 0.5);
  EXPECT_DOUBLE_EQ(*m.per_turn[1].fast1, 0.5) << "correct but slower is not fast";
  EXPECT_DOUBLE_EQ(*m.per_turn[2].fast1, 1.0);
  EXPECT_DOUBLE_EQ(*m.per_turn[1].pass, 1.0);

  AttemptResult c = attempt("c/z", 0, Outcome::kCorrect);
  c.turn_verdicts = {{1, "kernel", "correct", "", std::nullopt, false}};
  RunMetrics shared = compute_metrics({b, c}, 1, speedup_thresholds());
  ASSERT_EQ(shared.per_turn.size(), 1u);
  EXPECT_FALSE(shared.per_turn[0].fast1) << "not timed is not zero";
  EXPECT_DOUBLE_EQ(*shared.per_turn[0].pass, 1.0);
}

}  // namespace
}  // namespace mgk::report
