#include "store/history_table.h"

#include <algorithm>
#include <cstdio>

#include "store/records_json.h"
#include "store/timestamp.h"

namespace mgk::store {

std::string format_cost(const std::optional<double>& cost) {
  if (!cost) return "$?";
  const double usd = *cost;
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

std::vector<HistoryEntry> merge_history(const std::vector<AttemptSummary>& attempts,
                                        const std::vector<RunRecord>& runs, int limit) {
  std::vector<HistoryEntry> out;
  size_t a = 0, r = 0;
  while ((a < attempts.size() || r < runs.size()) && (limit <= 0 || int(out.size()) < limit)) {
    bool take_attempt =
        r == runs.size() || (a < attempts.size() && attempts[a].started_at >= runs[r].created_at);
    if (take_attempt) out.push_back({attempts[a++], std::nullopt});
    else out.push_back({std::nullopt, runs[r++]});
  }
  return out;
}

void to_json(nlohmann::json& j, const HistoryEntry& e) {
  if (e.attempt) {
    j = *e.attempt;
    j["row"] = "attempt";
  } else {
    j = *e.run;
    j["row"] = "run";
  }
}

namespace {

using Row = std::vector<std::string>;

Row attempt_row(const AttemptSummary& a) {
  std::string status = to_string(a.status);
  if (!a.exit_reason.empty()) status += " (" + a.exit_reason + ")";
  return {std::to_string(a.id), std::to_string(a.run_id), short_time(a.started_at), a.run_kind, a.problem, a.model, a.mode,
          status, std::to_string(a.turns), format_speedup(a.best_speedup), format_cost(a.cost_usd)};
}

std::string text_or(const nlohmann::json& j, const char* key, const std::string& fallback) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : fallback;
}

Row run_row(const RunRecord& r) {
  std::string status = to_string(r.status);
  std::string detail = text_or(r.summary, "verdict", text_or(r.summary, "stop", ""));
  if (!detail.empty()) status += " (" + detail + ")";
  std::string best = format_speedup(r.best_speedup);
  if (r.kind == "tune" && r.summary.is_object() && r.summary.contains("best") &&
      r.summary["best"].is_object() && r.summary["best"].contains("time_us")) {
    char us[32];
    std::snprintf(us, sizeof us, "%.2f us", r.summary["best"]["time_us"].get<double>());
    best = us;
  }
  return {"run " + std::to_string(r.id), std::to_string(r.id), short_time(r.created_at), r.kind,
          text_or(r.args, "problem", "-"), r.model.empty() ? "-" : r.model, "-", status, "-", best,
          r.model.empty() ? "-" : format_cost(r.cost_usd)};
}

}  // namespace

std::string render_history_table(const std::vector<AttemptSummary>& attempts) {
  return render_history_table(merge_history(attempts, {}, 0));
}

std::string render_history_table(const std::vector<HistoryEntry>& entries) {
  if (entries.empty()) return "nothing matches\n";
  std::vector<Row> rows = {{"ID", "RUN", "WHEN (UTC)", "KIND", "PROBLEM", "MODEL", "MODE", "STATUS", "TURNS", "BEST",
                            "COST"}};
  for (const auto& e : entries) rows.push_back(e.attempt ? attempt_row(*e.attempt) : run_row(*e.run));
  return render_columns(rows, {true, true, false, false, false, false, false, false, true, true, true});
}

std::string render_columns(const std::vector<std::vector<std::string>>& rows, const std::vector<bool>& right) {
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto& row : rows)
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
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
