// The compact table `mgk history` prints: one line per attempt, newest first as given.
#pragma once
#include <string>
#include <vector>

#include "store/records.h"

namespace mgk::store {

// Columns: ID, WHEN (UTC), PROBLEM, MODEL, MODE, STATUS (with the exit reason), TURNS,
// BEST (speedup, "-" without a correct kernel), COST. Ends with a newline; a line saying
// so when `attempts` is empty.
std::string render_history_table(const std::vector<AttemptSummary>& attempts);

// "$0.42", "$0.0031" (four decimals below a cent), "$0" for nothing.
std::string format_cost(double usd);

// "1.84x" or "-".
std::string format_speedup(const std::optional<double>& speedup);

}  // namespace mgk::store
