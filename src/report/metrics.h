// The benchmark's numbers, from the attempts' results (report/outcome.h):
//
// pass@k: the probability that at least one of k samples drawn from a problem's n is
// correct, averaged over problems, with the unbiased estimator of Chen et al. (2021):
// 1 - C(n-c, k) / C(n, k), c the correct samples. It is defined for 1 <= k <= n only: a
// problem with fewer finished samples than k does not enter pass@k (nothing is
// extrapolated), and each value says how many problems it averages.
//
// fast_p@k: the same estimator with c = the samples that are correct AND whose best
// correct kernel's slowest speedup over the sizes is > p. A correct sample that was not
// timed (ranks sharing a GPU) has no speedup: its problem's fast_p is "not timed", never
// 0 and never guessed, and an average over problems is "not timed" as soon as one of its
// problems is. Likewise a sample that was only compiled (--compile-only) may or may not be
// correct: its problem's pass@k is "not run". compiles@k counts samples where some kernel
// compiled, and is known in every mode.
//
// A correct sample timed under the timing floor at some size has no speedup: it is timed
// and fast at no p. Unfinished attempts (running, interrupted) and those the provider or
// the evaluator cut short before a correct kernel (infrastructure) enter no metric; they
// are counted apart.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "report/intervals.h"
#include "report/outcome.h"

namespace mgk::report {

// 1 - C(n-c, k) / C(n, k) as 1 - prod_{i=n-c+1}^{n} (1 - k/i); nullopt unless 1 <= k <= n
// and 0 <= c <= n.
std::optional<double> unbiased_at_k(int n, int c, int k);

// The p thresholds every report shows (0, 1, 1.5, 2) with `extra` added, sorted, unique.
std::vector<double> speedup_thresholds(const std::vector<double>& extra = {});

struct AtK {
  int k = 0;
  std::optional<double> value;  // absent: no problem has k samples, or some are unknown
  int problems = 0;             // problems with at least k finished samples
  int unknown = 0;              // those among them not run (pass) or not timed (fast_p)
  int successes = 0;            // one problem alone: c, its samples that count as a success
  std::optional<Interval> ci;   // a group with a value: its 95% bootstrap interval (report/intervals.h)
};

struct FastP {
  double p = 0;
  std::vector<AtK> at_k;  // k = 1 .. samples
};

struct ProblemMetrics {
  std::string problem, category;
  int world_size = 0;
  int n = 0;               // finished samples
  int correct = 0, compiles = 0;
  int not_run = 0;            // samples only compiled: correctness unknown
  int correct_not_timed = 0;  // correct samples without a speedup
  std::vector<AtK> pass, compiled;  // this problem alone: problems is 0 or 1
  std::vector<FastP> fast;
  std::optional<double> best_speedup, best_roofline_fraction;  // over its timed correct samples
  std::vector<size_t> attempts;  // indices into the results, by sample
};

// The suite, or one category of it.
struct GroupMetrics {
  std::string name;  // "all" or the category
  int problems = 0;
  std::vector<AtK> pass, compiled;
  std::vector<FastP> fast;
};

struct Totals {
  int count = 0;  // attempts summed, or what the sums were divided by (a mean's count)
  int64_t tokens_in = 0, tokens_out = 0;
  std::optional<double> cost_usd = 0.0;  // none when one attempt's cost is unknown
  double wall_s = 0;
};

struct FeatureCounts {
  std::string of;  // "correct kernels", or "compiled kernels (not run)" where none is correct
  int kernels = 0;
  std::map<std::string, int> transfer, overlap, sync;  // name -> kernels; "none" too
};

// What the turns buy: after turn t, each problem's share of finished samples that had a
// correct kernel (or, under --compile-only, one that compiled) by then, averaged over the
// problems. An attempt that stopped early keeps what it had reached.
struct TurnPoint {
  int turn = 0;
  std::optional<double> pass;  // absent: some sample was only compiled (correctness unknown)
  double compiles = 0;
  // Correct and faster than the reference (slowest size) by then: fast_1@1 after turn t.
  // Absent: pass is, or a correct kernel by then was not timed (ranks shared a GPU).
  std::optional<double> fast1;
};

struct RunMetrics {
  int samples = 0;
  std::vector<double> ps;
  int finished = 0, unfinished = 0;  // finished: the attempts the metrics count
  int infrastructure = 0;            // ended, but cut short by the provider or the evaluator: not counted
  GroupMetrics suite;
  std::vector<GroupMetrics> categories;  // by name
  std::vector<ProblemMetrics> problems;  // by name
  int correct = 0, correct_timed = 0, correct_not_timed = 0;
  int below_floor = 0;  // correct and timed, but under the timing floor: no speedup
  std::string timing;  // "timed", "not timed: ranks shared a GPU", "compile only: nothing ran", ...
  std::optional<double> speedup_geomean;  // over timed correct attempts (each its best kernel)
  std::optional<double> roofline_median;  // over timed correct attempts with a calibration
  int with_roofline = 0;
  Totals total;                        // every attempt, unfinished ones included
  std::optional<Totals> per_attempt;   // mean over the attempts the metrics count
  int solved = 0;                      // problems with a correct sample
  std::optional<Totals> per_solved;    // the run's totals over the solved problems
  std::map<Outcome, int> outcomes;     // finished attempts by outcome, and the unfinished
  FeatureCounts features;
  std::vector<TurnPoint> per_turn;     // t = 1 .. the most turns a finished attempt took
};

// `samples`: the run's samples per problem (the largest k); `ps` from speedup_thresholds.
RunMetrics compute_metrics(const std::vector<AttemptResult>& results, int samples, const std::vector<double>& ps);

// fast_p@1 as a function of p (the talk's "correct kernels against speedup threshold"):
// (p, value) at p = 0 and at every speedup a sample reached, each value holding until the
// next point. Empty when some correct sample was not timed, or nothing finished.
std::vector<std::pair<double, double>> fast_p_curve(const std::vector<AttemptResult>& results,
                                                    const RunMetrics& metrics);

}  // namespace mgk::report
