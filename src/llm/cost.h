// Dollars for one reply from its token counts and the model's price.
#pragma once
#include "llm/config.h"
#include "llm/provider.h"

namespace mgk::llm {

// Uncached input, cached input, cache writes and output each at their own rate (Usage says
// what each count covers). Counts that do not add up (cached > input) are clamped, not
// charged twice.
double cost_usd(const Usage& usage, const Price& price);

}  // namespace mgk::llm
