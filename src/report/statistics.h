// Small statistics the report modules share.
#pragma once
#include <algorithm>
#include <optional>
#include <vector>

namespace mgk::report {

// The median (the mean of the middle two for an even count); nullopt for no values.
inline std::optional<double> median(std::vector<double> v) {
  if (v.empty()) return std::nullopt;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace mgk::report
