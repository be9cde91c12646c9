#include "eval/timed_checks.h"

#include <algorithm>
#include <numeric>

namespace mgk::eval {

std::vector<int> draw_checked_calls(int calls, int count, std::mt19937_64& rng) {
  std::vector<int> all(std::max(calls, 0));
  std::iota(all.begin(), all.end(), 0);
  if (count >= calls) return all;
  // A partial Fisher-Yates shuffle: the first `count` are a uniform sample.
  for (int i = 0; i < count; ++i) {
    std::uniform_int_distribution<int> pick(i, calls - 1);
    std::swap(all[i], all[pick(rng)]);
  }
  all.resize(std::max(count, 0));
  std::sort(all.begin(), all.end());
  return all;
}

double miss_probability(int calls, int bad, int count) {
  if (count >= calls) return bad > 0 ? 0.0 : 1.0;
  double p = 1;
  for (int i = 0; i < count; ++i) p *= double(calls - bad - i) / double(calls - i);
  return std::max(p, 0.0);
}

}  // namespace mgk::eval
