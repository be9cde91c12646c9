#include "llm/cost.h"

#include <algorithm>

namespace mgk::llm {

double cost_usd(const Usage& usage, const Price& price) {
  int64_t cached = std::clamp<int64_t>(usage.cached_input_tokens, 0, usage.input_tokens);
  int64_t written =
      std::clamp<int64_t>(usage.cache_creation_tokens, 0, usage.input_tokens - cached);
  int64_t plain = usage.input_tokens - cached - written;
  double dollars_per_mtok = static_cast<double>(plain) * price.input +
                            static_cast<double>(cached) * price.cached_input +
                            static_cast<double>(written) * price.cache_write.value_or(price.input) +
                            static_cast<double>(std::max<int64_t>(usage.output_tokens, 0)) *
                                price.output;
  return dollars_per_mtok / 1e6;
}

}  // namespace mgk::llm
