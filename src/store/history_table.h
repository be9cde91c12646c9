// The compact table `mgk history` prints: one line per agent attempt and per run that has
// no attempts (`mgk eval`, `mgk tune`), newest first.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/records.h"

namespace mgk::store {

// One line of the history: an attempt, or a run without attempts; exactly one is set.
struct HistoryEntry {
  std::optional<AttemptSummary> attempt;
  std::optional<RunRecord> run;
};

// Both lists (each newest first) as one, newest first, at most `limit` lines (<= 0: all).
std::vector<HistoryEntry> merge_history(const std::vector<AttemptSummary>& attempts,
                                        const std::vector<RunRecord>& runs, int limit);

// As JSON: the attempt's or the run's own object, with "row": "attempt" or "run".
void to_json(nlohmann::json& j, const HistoryEntry& e);

// Columns: ID ("run N" for a run: 'mgk show --run N'), RUN (the id 'mgk report' and
// 'mgk show --run' take), WHEN (UTC), KIND, PROBLEM, MODEL,
// MODE, STATUS (with the exit reason, or an evaluation's verdict), TURNS, BEST (speedup,
// or a tuning run's best time; "-" without one), COST. Ends with a newline; a line saying
// so when there is nothing.
std::string render_history_table(const std::vector<HistoryEntry>& entries);
std::string render_history_table(const std::vector<AttemptSummary>& attempts);

// Rows of cells as aligned columns, the first row the header: `right` per column
// (numbers right-aligned), two spaces between, no trailing spaces; each line ends "\n".
std::string render_columns(const std::vector<std::vector<std::string>>& rows, const std::vector<bool>& right);

// "$0.42", "$0.0031" (four decimals below a cent), "$0" for nothing, "$?" for unknown (a
// model with no price).
std::string format_cost(const std::optional<double>& usd);

// "1.84x" or "-".
std::string format_speedup(const std::optional<double>& speedup);

}  // namespace mgk::store
