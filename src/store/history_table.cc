#include "store/history_table.h"

#include <algorithm>
#include <cstdio>

#include "store/timestamp.h"

namespace mgk::store {

std::string format_cost(double usd) {
  if (usd == 0) return "$0";
  char buf[32];
  std::snprintf(buf, sizeof buf, usd < 0.01 ? "$%.4f" : "$%.2f", usd);
  return buf;
}

std::string format_speedup(const std::optional<double>& speedup) {
  if (!speedup) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2fx", *speedup);
  return buf;
}

std::string render_history_table(const std::vector<AttemptSummary>& attempts) {
  if (attempts.empty()) return "no attempts match\n";
  using Row = std::vector<std::string>;
  std::vector<Row> rows = {
      {"ID", "WHEN (UTC)", "PROBLEM", "MODEL", "MODE", "STATUS", "TURNS", "BEST", "COST"}};
  for (const auto& a : attempts) {
    std::string status = to_string(a.status);
    if (!a.exit_reason.empty()) status += " (" + a.exit_reason + ")";
    rows.push_back({std::to_string(a.id), short_time(a.started_at), a.problem, a.model, a.mode,
                    status, std::to_string(a.turns), format_speedup(a.best_speedup),
                    format_cost(a.cost_usd)});
  }
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto& row : rows)
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());

  // Numbers right-aligned, text left-aligned; no trailing spaces.
  const std::vector<bool> right = {true, false, false, false, false, false, true, true, true};
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      std::string pad(width[c] - row[c].size(), ' ');
      if (c > 0) line += "  ";
      line += right[c] ? pad + row[c] : row[c] + (c + 1 < row.size() ? pad : "");
    }
    out += line + "\n";
  }
  return out;
}

}  // namespace mgk::store
