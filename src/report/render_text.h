// The report as text: a terminal table (`mgk report RUN`, the end of `mgk bench`) or
// Markdown (`--format md`, e.g. for bench/RESULTS.md). With two runs (--vs) the headline
// numbers and the per-problem table put them side by side.
#pragma once
#include <string>
#include <vector>

#include "report/bench_report.h"

namespace mgk::report {

std::string render_text(const std::vector<RunReport>& runs, bool markdown);

// The value at k of a metric as a cell: "62.5%", `unknown` ("not run", "not timed") where
// a problem's samples leave it unknown, "-" where no problem has k samples.
std::string at_k_text(const std::vector<AtK>& values, int k, const std::string& unknown);

}  // namespace mgk::report
