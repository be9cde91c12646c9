#include "report/intervals.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "report/metrics.h"

namespace mgk::report {

namespace {

// One problem's resampled estimate: c* ~ Binomial(n, c/n) drawn from its CDF, and the
// estimator's value at each c*, both tabled once (n is a run's samples per problem: small).
struct ProblemDraw {
  std::vector<double> cdf, value;
  ProblemDraw(int n, int c, int k) {
    const double p = n > 0 ? double(c) / n : 0.0;
    double acc = 0;
    for (int j = 0; j <= n; ++j) {
      acc += std::exp(std::lgamma(n + 1.0) - std::lgamma(j + 1.0) - std::lgamma(n - j + 1.0)) *
             (j ? std::pow(p, j) : 1.0) * (n - j ? std::pow(1 - p, n - j) : 1.0);
      cdf.push_back(acc);
      value.push_back(unbiased_at_k(n, j, k).value_or(0.0));
    }
    cdf.back() = 1.0;  // no rounding past the last
  }
  double draw(double u) const { return value[size_t(std::lower_bound(cdf.begin(), cdf.end(), u) - cdf.begin())]; }
};

}  // namespace

std::optional<Interval> bootstrap_at_k(const std::vector<std::pair<int, int>>& problems, int k, int resamples) {
  if (problems.empty() || resamples < 1) return std::nullopt;
  std::vector<ProblemDraw> draws;
  draws.reserve(problems.size());
  for (const auto& [n, c] : problems) draws.emplace_back(n, c, k);
  std::mt19937_64 rng(0x6d676b);  // fixed: the same report prints the same interval
  std::uniform_int_distribution<size_t> pick(0, problems.size() - 1);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<double> means;
  means.reserve(size_t(resamples));
  for (int b = 0; b < resamples; ++b) {
    double sum = 0;
    for (size_t i = 0; i < problems.size(); ++i) sum += draws[pick(rng)].draw(unit(rng));
    means.push_back(sum / double(problems.size()));
  }
  std::sort(means.begin(), means.end());
  auto at = [&](double q) {
    const size_t i = size_t(std::clamp(std::floor(q * double(means.size() - 1) + 0.5), 0.0, double(means.size() - 1)));
    return means[i];
  };
  const double tail = (1 - kConfidence) / 2;
  return Interval{at(tail), at(1 - tail)};
}

}  // namespace mgk::report
