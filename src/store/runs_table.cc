#include "store/runs_table.h"

#include <cstdio>

#include "store/history_table.h"
#include "store/timestamp.h"

namespace mgk::store {

namespace {

std::string problems_of(const RunRecord& r) {
  const nlohmann::json& a = r.args;
  if (!a.is_object()) return "-";
  if (a.contains("problem_list") && a["problem_list"].is_array())
    return std::to_string(a["problem_list"].size()) + " x " + std::to_string(a.value("samples", 1));
  return a.contains("problem") && a["problem"].is_string() ? a["problem"].get<std::string>() : "-";
}

// The suite's pass@1 as the run's end stored it (report::summary_json).
std::string pass_at_1(const RunRecord& r) {
  if (r.kind != "bench") return "-";
  if (r.args.is_object() && r.args.value("compile_only", false)) return "not run";
  const nlohmann::json& s = r.summary;
  if (!s.is_object() || !s.contains("suite") || !s["suite"].contains("pass_at_k")) return "-";
  for (const auto& at : s["suite"]["pass_at_k"])
    if (at.value("k", 0) == 1 && at.contains("value") && at["value"].is_number()) {
      char b[32];
      std::snprintf(b, sizeof b, "%.1f%%", 100 * at["value"].get<double>());
      return b;
    }
  return "-";
}

}  // namespace

std::string render_runs_table(const std::vector<RunRecord>& runs) {
  if (runs.empty()) return "nothing matches\n";
  std::vector<std::vector<std::string>> rows = {
      {"RUN", "WHEN (UTC)", "KIND", "MODEL", "PROBLEMS", "STATUS", "PASS@1", "COST", "NAME"}};
  for (const RunRecord& r : runs)
    rows.push_back({std::to_string(r.id), short_time(r.created_at), r.kind, r.model.empty() ? "-" : r.model,
                    problems_of(r), to_string(r.status), pass_at_1(r), r.model.empty() ? "-" : format_cost(r.cost_usd),
                    r.name().empty() ? "-" : r.name()});
  return render_columns(rows, {true, false, false, false, false, false, true, true, false});
}

}  // namespace mgk::store
