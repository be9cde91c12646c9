// The report as text: a terminal table (`mgk report RUN`, the end of `mgk bench`) or
// Markdown (`--format md`, e.g. for bench/RESULTS.md). With several runs a leaderboard opens
// it (report/leaderboard.h), and the headline numbers and the per-problem table put them side
// by side.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "report/bench_report.h"

namespace mgk::report {

std::string render_text(const std::vector<RunReport>& runs, bool markdown);

// The value at k of a metric as a cell: "62.5%", `unknown` ("not run", "not timed") where
// a problem's samples leave it unknown, "-" where no problem has k samples. Where fewer
// than the group's `group_problems` have k samples, the value says over how many: "100.0%
// (1/3)".
std::string at_k_text(const std::vector<AtK>& values, int k, const std::string& unknown, int group_problems = 0);

// The attempts a run's metrics leave out, as a clause for the line that counts the others:
// ", 2 unfinished and 1 cut short by the provider or the evaluator (infrastructure), not counted ('mgk bench
// --resume 7 --retry-failed' runs that one again)"; "" when none.
std::string not_counted_text(const RunMetrics& m, int64_t run_id);

// A problem's best speedup as a cell: "1.42x", "not timed" (correct, nothing timed), "-".
std::string best_speedup_text(const ProblemMetrics& p);

// How many kernels made each choice: "register 3, tma 0, copy_engine 1, none 2".
std::string feature_counts_text(const std::map<std::string, int>& counts, const std::vector<std::string>& names);

}  // namespace mgk::report
