// Runs side by side, one row each (`mgk report RUN_A RUN_B ...`): the headline numbers of a
// paper's table, from the metrics every other format prints. The text and Markdown reports
// open with it when they hold several runs; `--format tex` is it alone, as LaTeX.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "report/bench_report.h"

namespace mgk::report {

struct LeaderboardRow {
  int64_t run = 0;
  std::string name;  // the run's --name, or ""
  std::string model, mode;
  int problems = 0, samples = 0;  // the problems its metrics count (every run's, in a comparison)
  const AtK* pass1 = nullptr;     // null where the run has no such number
  const AtK* compiles1 = nullptr;
  const AtK* fast1 = nullptr;     // fast_1@1: correct and faster than the reference
  const AtK* fast2 = nullptr;     // fast_2@1: at least twice as fast
  std::optional<double> cost_usd;  // none: unknown (a model with no price)
};

std::vector<LeaderboardRow> leaderboard_rows(const std::vector<RunReport>& runs);

// The leaderboard as LaTeX (booktabs): a comment naming the runs and what they were
// compared on, then one tabular.
std::string render_tex(const std::vector<RunReport>& runs);

}  // namespace mgk::report
