// Confidence intervals for pass@k and fast_p@k over a group of problems: a percentile
// bootstrap that resamples the problems (with replacement) and, within each problem drawn,
// its samples (with replacement: c* ~ Binomial(n, c/n)), then takes the group's mean of the
// unbiased estimator. Both sources of chance a benchmark number has, the problems chosen and
// the samples drawn, are in the interval. The generator's seed is fixed, so a report printed
// twice prints the same interval.
#pragma once
#include <optional>
#include <utility>
#include <vector>

namespace mgk::report {

struct Interval {
  double low = 0, high = 0;
};

inline constexpr double kConfidence = 0.95;
inline constexpr int kResamples = 1000;  // ~0.5 s for a 57-problem report on a 2-core VM

// `problems`: (n, c) per problem with n >= k (finished samples, those that count). nullopt
// for no problems.
std::optional<Interval> bootstrap_at_k(const std::vector<std::pair<int, int>>& problems, int k,
                                       int resamples = kResamples);

}  // namespace mgk::report
