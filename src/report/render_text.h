// The report as text: a terminal table (`mgk report RUN`, the end of `mgk bench`) or
// Markdown (`--format md`, e.g. for bench/RESULTS.md). With two runs (--vs) the headline
// numbers and the per-problem table put them side by side.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "report/bench_report.h"

namespace mgk::report {

std::string render_text(const std::vector<RunReport>& runs, bool markdown);

// The value at k of a metric as a cell: "62.5%", `unknown` ("not run", "not timed") where
// a problem's samples leave it unknown, "-" where no problem has k samples.
std::string at_k_text(const std::vector<AtK>& values, int k, const std::string& unknown);

// A problem's best speedup as a cell: "1.42x", "not timed" (correct, nothing timed), "-".
std::string best_speedup_text(const ProblemMetrics& p);

// How many kernels made each choice: "register 3, tma 0, copy_engine 1, none 2".
std::string feature_counts_text(const std::map<std::string, int>& counts, const std::vector<std::string>& names);

}  // namespace mgk::report
