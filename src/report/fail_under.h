// `--fail-under METRIC=VALUE` for CI: a run whose suite-wide metric is below VALUE (or
// unknown: not run, not timed, no problem with k samples) fails the command with exit 1.
// METRIC is pass@K, compiles@K or fast_P@K (fast_1.5@1); VALUE a fraction (0.5) or a
// percentage (50%).
#pragma once
#include <string>
#include <vector>

#include "report/metrics.h"

namespace mgk::report {

struct Threshold {
  enum class Metric { kPass, kCompiles, kFast } metric = Metric::kPass;
  double p = 0;  // fast_p only
  int k = 1;
  double at_least = 0;  // a fraction in [0, 1]
  std::string text;     // as given
};

// UsageError saying what a threshold looks like when `text` is not one.
Threshold parse_threshold(const std::string& text);

// One line per threshold `m` does not meet ("pass@1 is 25.0%, under 50.0%"); empty when it
// meets them all.
std::vector<std::string> unmet(const RunMetrics& m, const std::vector<Threshold>& thresholds);

}  // namespace mgk::report
