#include "eval/timing.h"

#include <algorithm>

namespace mgk::eval {

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  double pos = q * double(v.size() - 1);
  size_t lo = size_t(pos);
  size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - double(lo));
}

Timing summarize(const std::vector<std::vector<double>>& per_rank) {
  Timing t;
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
