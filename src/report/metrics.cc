#include "report/metrics.h"

#include "report/statistics.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace mgk::report {
namespace {

// A group's value at k: the mean over its problems with at least k samples of `value(problem)`.
// `per_problem_at(problem)` is the problem's own AtK at k.
template <typename F>
AtK mean_at_k(const std::vector<const ProblemMetrics*>& problems, int k, F per_problem_at) {
  AtK a{k, std::nullopt, 0, 0};
  double sum = 0;
  for (const ProblemMetrics* p : problems) {
    if (p->n < k) continue;
    ++a.problems;
    std::optional<double> v = per_problem_at(*p).value;
    if (!v) ++a.unknown;
    else sum += *v;
  }
  if (a.problems > 0 && a.unknown == 0) {
    a.value = sum / a.problems;
    std::vector<std::pair<int, int>> counts;
    for (const ProblemMetrics* p : problems)
      if (p->n >= k) counts.emplace_back(p->n, per_problem_at(*p).successes);
    a.ci = bootstrap_at_k(counts, k);
  }
  return a;
}

GroupMetrics group(const std::string& name, const std::vector<const ProblemMetrics*>& problems, int samples,
                   const std::vector<double>& ps) {
  GroupMetrics g;
  g.name = name;
  g.problems = int(problems.size());
  for (int k = 1; k <= samples; ++k) {
    g.pass.push_back(mean_at_k(problems, k, [k](const ProblemMetrics& p) { return p.pass[size_t(k - 1)]; }));
    g.compiled.push_back(mean_at_k(problems, k, [k](const ProblemMetrics& p) { return p.compiled[size_t(k - 1)]; }));
  }
  for (size_t i = 0; i < ps.size(); ++i) {
    FastP f{ps[i], {}};
    for (int k = 1; k <= samples; ++k)
      f.at_k.push_back(
          mean_at_k(problems, k, [i, k](const ProblemMetrics& p) { return p.fast[i].at_k[size_t(k - 1)]; }));
    g.fast.push_back(f);
  }
  return g;
}

// One problem alone, as a group of one would have it.
AtK single(int n, int c, int k, bool known = true) {
  if (n < k) return {k, std::nullopt, 0, 0};
  return {k, known ? unbiased_at_k(n, c, k) : std::nullopt, 1, known ? 0 : 1, c};
}

void add(Totals& t, const AttemptResult& r) {
  ++t.count;
  t.tokens_in += r.tokens_in;
  t.tokens_out += r.tokens_out;
  t.cost_usd = t.cost_usd && r.cost_usd ? std::optional<double>(*t.cost_usd + *r.cost_usd) : std::nullopt;
  t.wall_s += r.wall_s;
}

Totals divided(const Totals& t, int by) {
  Totals d = t;
  d.count = by;
  d.tokens_in = int64_t(std::llround(double(t.tokens_in) / by));
  d.tokens_out = int64_t(std::llround(double(t.tokens_out) / by));
  if (t.cost_usd) d.cost_usd = *t.cost_usd / by;
  d.wall_s = t.wall_s / by;
  return d;
}

void count_features(const std::vector<const AttemptResult*>& kernels, FeatureCounts& f) {
  auto tally = [](std::map<std::string, int>& m, const std::vector<std::string>& names) {
    if (names.empty()) ++m["none"];
    for (const auto& n : names) ++m[n];
  };
  for (const AttemptResult* r : kernels) {
    if (!r->features) continue;
    ++f.kernels;
    tally(f.transfer, r->features->transfer);
    tally(f.overlap, r->features->overlap);
    tally(f.sync, r->features->sync);
  }
}

// A turn's verdict that shows a kernel compiled.
bool compiled_verdict(const std::string& v) { return !v.empty() && v != "compile_error" && v != "infrastructure"; }

std::vector<TurnPoint> per_turn(const std::vector<AttemptResult>& results, const std::vector<ProblemMetrics>& problems) {
  size_t turns = 0;
  for (const auto& p : problems)
    for (size_t i : p.attempts) turns = std::max(turns, results[i].turn_verdicts.size());
  std::vector<TurnPoint> out;
  for (size_t t = 1; t <= turns; ++t) {
    TurnPoint point{int(t), 0.0, 0.0, 0.0};
    int counted = 0;
    for (const auto& p : problems) {
      if (p.attempts.empty()) continue;
      int correct = 0, compiled = 0, fast = 0;
      bool unknown = false, untimed = false;
      for (size_t i : p.attempts) {
        const auto& v = results[i].turn_verdicts;
        bool c = false, k = false, f = false, u = false;
        for (size_t j = 0; j < std::min(t, v.size()); ++j) {
          const bool ok = v[j].verdict == "correct";
          c |= ok;
          k |= compiled_verdict(v[j].verdict);
          unknown |= v[j].verdict == "compiled";
          f |= ok && v[j].speedup && *v[j].speedup > 1;
          u |= ok && !v[j].timed;
        }
        correct += c;
        compiled += k;
        fast += f;
        untimed |= u && !f;  // a fast kernel by then settles it; an untimed one leaves it unknown
      }
      ++counted;
      const double n = double(p.attempts.size());
      if (unknown) point.pass.reset();
      else if (point.pass) *point.pass += correct / n;
      if (unknown || untimed) point.fast1.reset();
      else if (point.fast1) *point.fast1 += fast / n;
      point.compiles += compiled / n;
    }
    if (counted == 0) break;
    if (point.pass) *point.pass /= counted;
    if (point.fast1) *point.fast1 /= counted;
    point.compiles /= counted;
    out.push_back(point);
  }
  return out;
}

}  // namespace

std::optional<double> unbiased_at_k(int n, int c, int k) {
  if (k < 1 || k > n || c < 0 || c > n) return std::nullopt;
  if (n - c < k) return 1.0;  // every draw of k holds a correct sample
  double none_correct = 1.0;
  for (int i = n - c + 1; i <= n; ++i) none_correct *= 1.0 - double(k) / double(i);
  return 1.0 - none_correct;
}

std::vector<double> speedup_thresholds(const std::vector<double>& extra) {
  std::set<double> s = {0.0, 1.0, 1.5, 2.0};
  s.insert(extra.begin(), extra.end());
  return {s.begin(), s.end()};
}

RunMetrics compute_metrics(const std::vector<AttemptResult>& results, int samples, const std::vector<double>& ps) {
  RunMetrics m;
  m.samples = samples;
  m.ps = ps;
  std::map<std::string, ProblemMetrics> by_problem;
  std::vector<const AttemptResult*> correct_kernels, compiled_kernels;
  std::vector<double> log_speedups, rooflines;
  bool any_shared = false;
  for (size_t i = 0; i < results.size(); ++i) {
    const AttemptResult& r = results[i];
    add(m.total, r);
    ProblemMetrics& p = by_problem[r.problem];
    p.problem = r.problem;
    p.category = r.category;
    p.world_size = std::max(p.world_size, r.world_size);
    if (r.outcome == Outcome::kUnfinished || r.outcome == Outcome::kInfrastructure) {
      ++(r.outcome == Outcome::kUnfinished ? m.unfinished : m.infrastructure);
      ++m.outcomes[r.outcome];
      continue;
    }
    ++m.finished;
    ++m.outcomes[r.outcome];
    p.attempts.push_back(i);
    ++p.n;
    if (compiled_something(r.outcome)) ++p.compiles;
    if (r.outcome == Outcome::kCompiled) {
      ++p.not_run;
      compiled_kernels.push_back(&r);
    }
    if (r.outcome != Outcome::kCorrect) continue;
    ++p.correct;
    ++m.correct;
    correct_kernels.push_back(&r);
    if (!r.timed) {
      ++p.correct_not_timed;
      ++m.correct_not_timed;
      any_shared |= r.not_timed_because == "ranks shared a GPU";
      continue;
    }
    ++m.correct_timed;
    if (!r.credible) ++m.below_floor;
    if (r.speedup && *r.speedup > 0) {
      log_speedups.push_back(std::log(*r.speedup));
      if (!p.best_speedup || *r.speedup > *p.best_speedup) p.best_speedup = r.speedup;
    }
    if (r.roofline_fraction) {
      rooflines.push_back(*r.roofline_fraction);
      if (!p.best_roofline_fraction || *r.roofline_fraction > *p.best_roofline_fraction)
        p.best_roofline_fraction = r.roofline_fraction;
    }
  }

  for (auto& [name, p] : by_problem) {
    for (int k = 1; k <= samples; ++k) {
      p.pass.push_back(single(p.n, p.correct, k, p.not_run == 0));
      p.compiled.push_back(single(p.n, p.compiles, k));
    }
    for (double threshold : ps) {
      int c = 0;
      for (size_t i : p.attempts) c += faster_than(results[i], threshold);
      FastP f{threshold, {}};
      const bool known = p.not_run == 0 && p.correct_not_timed == 0;
      for (int k = 1; k <= samples; ++k) f.at_k.push_back(single(p.n, c, k, known));
      p.fast.push_back(f);
    }
    m.problems.push_back(std::move(p));
  }

  std::vector<const ProblemMetrics*> all;
  std::map<std::string, std::vector<const ProblemMetrics*>> by_category;
  for (const auto& p : m.problems) {
    all.push_back(&p);
    by_category[p.category].push_back(&p);
  }
  m.suite = group("all", all, samples, ps);
  for (const auto& [name, members] : by_category) m.categories.push_back(group(name, members, samples, ps));

  if (!log_speedups.empty()) {
    double sum = 0;
    for (double l : log_speedups) sum += l;
    m.speedup_geomean = std::exp(sum / double(log_speedups.size()));
  }
  m.roofline_median = median(rooflines);
  m.with_roofline = int(rooflines.size());

  if (m.finished > 0) {
    Totals finished_total;
    for (const auto& r : results)
      if (r.outcome != Outcome::kUnfinished && r.outcome != Outcome::kInfrastructure) add(finished_total, r);
    m.per_attempt = divided(finished_total, m.finished);
  }
  for (const auto& p : m.problems) m.solved += p.correct > 0;
  if (m.solved > 0) m.per_solved = divided(m.total, m.solved);

  if (!correct_kernels.empty()) {
    m.features.of = "correct kernels";
    count_features(correct_kernels, m.features);
  } else if (!compiled_kernels.empty()) {
    m.features.of = "compiled kernels (not run)";
    count_features(compiled_kernels, m.features);
  } else {
    m.features.of = "correct kernels";
  }

  const int compiled_only = m.outcomes.count(Outcome::kCompiled) ? m.outcomes.at(Outcome::kCompiled) : 0;
  if (m.correct == 0 && compiled_only > 0) m.timing = "compile only: nothing ran, nothing was checked or timed";
  else if (m.correct == 0) m.timing = "no correct kernel";
  else if (m.correct_not_timed == 0) m.timing = "timed";
  else if (m.correct_timed == 0)
    m.timing = any_shared ? "checked, not timed: ranks shared a GPU" : "checked, not timed";
  else
    m.timing = "partly timed: " + std::to_string(m.correct_not_timed) + " correct attempt(s) not timed";
  m.per_turn = per_turn(results, m.problems);
  return m;
}

std::vector<std::pair<double, double>> fast_p_curve(const std::vector<AttemptResult>& results,
                                                    const RunMetrics& m) {
  if (m.correct_not_timed > 0 || m.finished == 0 || m.outcomes.count(Outcome::kCompiled)) return {};
  std::set<double> breaks = {0.0};
  for (const auto& r : results)
    if (r.outcome == Outcome::kCorrect && r.speedup) breaks.insert(*r.speedup);
  std::vector<std::pair<double, double>> curve;
  for (double p : breaks) {
    double sum = 0;
    int problems = 0;
    for (const ProblemMetrics& pm : m.problems) {
      if (pm.n == 0) continue;
      ++problems;
      int c = 0;
      for (size_t i : pm.attempts) c += faster_than(results[i], p);
      sum += double(c) / pm.n;
    }
    curve.emplace_back(p, problems ? sum / problems : 0);
  }
  return curve;
}

}  // namespace mgk::report
