#include "eval/timing.h"

#include <algorithm>

#include "eval/evaluation_text.h"

namespace mgk::eval {

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  double pos = q * double(v.size() - 1);
  size_t lo = size_t(pos);
  size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - double(lo));
}

results::Timing summarize(const std::vector<std::vector<double>>& per_rank) {
  results::Timing t;
  if (per_rank.empty()) return t;
  size_t n = per_rank.front().size();
  for (const auto& r : per_rank) n = std::min(n, r.size());
  std::vector<double> iter(n, 0);
  for (const auto& r : per_rank)
    for (size_t i = 0; i < n; ++i) iter[i] = std::max(iter[i], r[i]);
  t.iterations = int(n);
  t.median_us = quantile(iter, 0.5);
  t.p10_us = quantile(iter, 0.1);
  t.p90_us = quantile(iter, 0.9);
  t.min_us = iter.empty() ? 0 : *std::min_element(iter.begin(), iter.end());
  for (const auto& r : per_rank) t.per_rank_median_us.push_back(quantile(r, 0.5));
  return t;
}

Credibility judge_credibility(const results::Timing& candidate, const results::Timing& floor, const std::optional<results::Timing>& outside,
                              double spread_us) {
  // No kernel runs faster than an empty one under the same protocol: a median below the
  // floor's means the clock saw less than the work.
  if (candidate.median_us < floor.median_us)
    return {false, "the measured time (" + format_us(candidate.median_us) + ") is below the timing floor (an empty "
                   "kernel, " + format_us(floor.median_us) + ")"};
  if (outside) {
    const double least = outside->median_us * (1 - kOutsideSlackFraction) - kOutsideSlackUs - spread_us;
    if (candidate.median_us < least)
      return {false, "the candidate's process reported " + format_us(candidate.median_us) +
                         ", but the harness's own clock saw at least " + format_us(outside->median_us) +
                         " of work per call: its timing was tampered with, or work ran past the call"};
  }
  return {};
}

RooflinePoint roofline(const problems::ResolvedCost& cost, const Peaks& peaks) {
  RooflinePoint p;
  auto consider = [&](double amount, double rate, const char* name) {
    if (amount <= 0 || rate <= 0) return;
    double us = amount / rate * 1e6;
    if (us > p.us) p.us = us, p.bound = name;
  };
  consider(cost.flops, peaks.flops_per_s, "flops");
  consider(cost.hbm_bytes, peaks.hbm_bytes_per_s, "hbm");
  consider(cost.link_bytes, peaks.link_bytes_per_s, "link");
  return p;
}

}  // namespace mgk::eval
