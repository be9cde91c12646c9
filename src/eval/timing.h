// Turning the ranks' per-iteration times into the numbers mgk reports, and the
// communication-aware roofline.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "eval/machine.h"
#include "results/eval_result.h"
#include "problems/resolve.h"

namespace mgk::eval {

// per_rank[r][i] = rank r's time of iteration i (µs). An iteration's time is the max over
// ranks (the collective is done when the slowest rank is); median and percentiles of that.
results::Timing summarize(const std::vector<std::vector<double>>& per_rank);

// Quantile q in [0,1] of `v` (linear interpolation); v need not be sorted.
double quantile(std::vector<double> v, double q);

// How far below the outside clock's bound (SizeResult::outside) a candidate's median may lie
// and still be believed: a fraction of the bound plus a fixed margin plus the spread of the
// probes the bound subtracts. Within it a candidate's process can shave its reported time;
// beyond it, the time is not credible. From the H200 at one rank (bench/RESULTS.md, 14th
// session): an honest all-reduce's bound lay from 0.06x to 4x its time on calls under 30 us
// (up to 43 us above it) and 1.1x to 1.3x on 256 MiB ones, from one run to the next. So only
// a forgery that more than halves a call's time is seen, and only on long calls.
constexpr double kOutsideSlackFraction = 0.50;
constexpr double kOutsideSlackUs = 20.0;

// Whether the candidate's median can be believed, and if not, why (one clause): under the
// timing floor, or under the outside clock's bound less its slack (`spread_us`: the
// probes' p10-p90 spread).
struct Credibility {
  bool credible = true;
  std::string why;
};
Credibility judge_credibility(const results::Timing& candidate, const results::Timing& floor, const std::optional<results::Timing>& outside,
                              double spread_us);

struct RooflinePoint {
  double us = 0;      // the lower bound on time from the cost model and the peaks
  std::string bound;  // which term binds: "link", "hbm" or "flops"
};

// max(FLOPs/peak, HBM bytes/HBM bw, link bytes/link bw); us = 0 when no peak is known.
RooflinePoint roofline(const problems::ResolvedCost& cost, const Peaks& peaks);

}  // namespace mgk::eval
