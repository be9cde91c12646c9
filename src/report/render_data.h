// The report for machines: JSON (one document, every number, the runs in the order given)
// and CSV (tidy: one number per row, `run,scope,name,sample,metric,k,p,value,note`).
// Fields that depend on when or how fast the run went, and so differ between a run and
// its killed-and-resumed twin: "run" (ids, status, times, args), "attempt_id" and every
// "wall_s". Everything else is a function of the stored results.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/bench_report.h"

namespace mgk::report {

nlohmann::json report_json(const std::vector<RunReport>& runs);
std::string render_csv(const std::vector<RunReport>& runs);

// The metrics alone (no per-attempt lists), stored as a bench run's summary.
nlohmann::json summary_json(const RunMetrics& metrics);

}  // namespace mgk::report
