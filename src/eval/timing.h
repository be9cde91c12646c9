// Turning the ranks' per-iteration times into the numbers mgk reports, and the
// communication-aware roofline.
#pragma once
#include <string>
#include <vector>

#include "eval/machine.h"
#include "eval/result.h"
#include "problems/resolve.h"

namespace mgk::eval {

// per_rank[r][i] = rank r's time of iteration i (µs). An iteration's time is the max over
// ranks (the collective is done when the slowest rank is); median and percentiles of that.
Timing summarize(const std::vector<std::vector<double>>& per_rank);

// Quantile q in [0,1] of `v` (linear interpolation); v need not be sorted.
double quantile(std::vector<double> v, double q);

struct RooflinePoint {
  double us = 0;      // the lower bound on time from the cost model and the peaks
  std::string bound;  // which term binds: "link", "hbm" or "flops"
};

// max(FLOPs/peak, HBM bytes/HBM bw, link bytes/link bw); us = 0 when no peak is known.
RooflinePoint roofline(const problems::ResolvedCost& cost, const Peaks& peaks);

}  // namespace mgk::eval
