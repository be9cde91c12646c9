// A bench run's report: the stored data, each attempt's result and the run's metrics,
// computed once and rendered in every format (report/render_*.h). A deterministic
// function of what the store holds: everything is sorted, and the only fields that
// depend on when or how fast the run went are the run's ids and times and the wall_s
// figures, so a run killed and resumed reports like one that never stopped.
#pragma once
#include <cstdint>
#include <vector>

#include "common/name_patterns.h"
#include "report/metrics.h"
#include "report/outcome.h"
#include "report/run_data.h"
#include "store/store.h"

namespace mgk::report {

struct RunReport {
  RunData data;
  std::vector<AttemptResult> results;  // as data.attempts
  RunMetrics metrics;
  // In a comparison of runs: this run's problems that some other run lacks, left out of
  // its metrics so that every run is measured on the same problems. Sorted.
  std::vector<std::string> left_out;
};

// `extra_ps`: speedup thresholds beyond 0, 1, 1.5 and 2; `only`: the problems to count
// (default: every one). NotFoundError for an unknown run.
RunReport build_report(store::Store& store, int64_t run_id, const std::vector<double>& extra_ps = {},
                       const NamePatterns& only = {});

// Several runs side by side (a leaderboard), each measured on the problems every one of them
// has (of `only`), its others in `left_out`. UsageError when they share none.
std::vector<RunReport> build_comparison(store::Store& store, const std::vector<int64_t>& run_ids,
                                        const std::vector<double>& extra_ps = {}, const NamePatterns& only = {});

// "run 12 'baseline' (openai:gpt-4o, refine, 8 problems x 2 samples)" for headings (the name
// where the run has one).
std::string run_title(const RunReport& r);

}  // namespace mgk::report
