#include "report/leaderboard.h"

#include "common/format.h"

namespace mgk::report {
namespace {

const AtK* first(const std::vector<AtK>& v) { return v.empty() || v.front().problems == 0 ? nullptr : &v.front(); }

const AtK* fast_at_1(const GroupMetrics& g, double p) {
  for (const FastP& f : g.fast)
    if (f.p == p) return first(f.at_k);
  return nullptr;
}

// LaTeX's special characters in a model's or a mode's name.
std::string tex_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '_': case '%': case '&': case '#': case '$': case '{': case '}': out += '\\'; out += c; break;
      case '~': out += "\\textasciitilde{}"; break;
      case '^': out += "\\textasciicircum{}"; break;
      case '\\': out += "\\textbackslash{}"; break;
      default: out += c;
    }
  }
  return out;
}

// "50.0 [31--69]" (percent, the 95% interval), "\textit{not run}", "--".
std::string tex_at_k(const AtK* a, const char* unknown) {
  if (!a) return "--";
  if (!a->value) return std::string("\\textit{") + unknown + "}";
  std::string s = fixed(*a->value * 100, 1);
  if (a->ci && a->ci->high > a->ci->low) s += " [" + fixed(a->ci->low * 100, 0) + "--" + fixed(a->ci->high * 100, 0) + "]";
  return s;
}

}  // namespace

std::vector<LeaderboardRow> leaderboard_rows(const std::vector<RunReport>& runs) {
  std::vector<LeaderboardRow> rows;
  for (const RunReport& r : runs) {
    LeaderboardRow row;
    row.run = r.data.run.id;
    row.name = r.data.run.name();
    row.model = r.data.run.model;
    row.mode = r.data.run.args.is_object() ? r.data.run.args.value("mode", "") : "";
    row.problems = r.metrics.suite.problems;
    row.samples = r.metrics.samples;
    row.pass1 = first(r.metrics.suite.pass);
    row.compiles1 = first(r.metrics.suite.compiled);
    row.fast1 = fast_at_1(r.metrics.suite, 1);
    row.fast2 = fast_at_1(r.metrics.suite, 2);
    row.cost_usd = r.metrics.total.cost_usd;
    rows.push_back(row);
  }
  return rows;
}

std::string render_tex(const std::vector<RunReport>& runs) {
  std::string ids;
  for (const RunReport& r : runs) ids += (ids.empty() ? "" : ", ") + std::to_string(r.data.run.id);
  std::string out = "% mgk bench leaderboard: run" + std::string(runs.size() > 1 ? "s " : " ") + ids;
  for (const RunReport& r : runs)
    if (!r.left_out.empty()) {
      out += "; compared on the problems every run has (run " + std::to_string(r.data.run.id) + " left out " +
             std::to_string(r.left_out.size()) + ")";
      break;
    }
  out += ".\n% Percent of problems, averaged over each problem's samples (unbiased pass@k); [the 95% bootstrap\n"
         "% interval over problems and samples]. fast_p: correct and faster than the reference by more than\n"
         "% p at every size. Needs \\usepackage{booktabs}.\n";
  out += "\\begin{tabular}{lllrrrrrr}\n\\toprule\n";
  out += "Run & Model & Mode & Problems & pass@1 (\\%) & fast$_1$@1 (\\%) & fast$_2$@1 (\\%) & compiles@1 (\\%) & "
         "Cost (USD) \\\\\n\\midrule\n";
  for (const LeaderboardRow& row : leaderboard_rows(runs))
    out += (row.name.empty() ? std::to_string(row.run) : tex_escape(row.name)) + " & " + tex_escape(row.model) +
           " & " + tex_escape(row.mode) + " & " + std::to_string(row.problems) + " & " +
           tex_at_k(row.pass1, "not run") + " & " +
           tex_at_k(row.fast1, "not timed") + " & " + tex_at_k(row.fast2, "not timed") + " & " +
           tex_at_k(row.compiles1, "--") + " & " + (row.cost_usd ? fixed(*row.cost_usd, 2) : "?") + " \\\\\n";
  out += "\\bottomrule\n\\end{tabular}\n";
  return out;
}

}  // namespace mgk::report
