// mgk report RUN...: a bench run's metrics as a terminal table, Markdown, CSV, JSON, LaTeX or
// one self-contained HTML file with plots; several runs (or --vs RUN_B) side by side, each
// on the problems every one of them has.
#include <fstream>
#include <iostream>

#include "cli/commands.h"
#include "common/env.h"
#include "common/log.h"
#include "common/name_patterns.h"
#include "report/bench_report.h"
#include "report/fail_under.h"
#include "report/leaderboard.h"
#include "report/render_data.h"
#include "report/render_html.h"
#include "report/render_text.h"
#include "store/store.h"

namespace mgk::cli {
namespace {

struct ReportArgs {
  std::vector<std::string> runs;  // ids or names
  int64_t vs = 0;
  std::string format = "table", out, problems_file;
  std::vector<std::string> problems;
  std::vector<double> ps;
  std::vector<std::string> fail_under;
  bool json = false;
};

std::string render(const std::vector<report::RunReport>& runs, const std::string& format) {
  if (format == "table") return report::render_text(runs, false);
  if (format == "md") return report::render_text(runs, true);
  if (format == "json") return report::report_json(runs).dump(2) + "\n";
  if (format == "csv") return report::render_csv(runs);
  if (format == "tex") return report::render_tex(runs);
  return report::render_html(runs);
}

// --fail-under: exit 1 when some run is under a threshold (each said on standard error).
ExitCode check_thresholds(const std::vector<report::RunReport>& reports, const std::vector<report::Threshold>& ts) {
  ExitCode code = ExitCode::kOk;
  for (const report::RunReport& r : reports)
    for (const std::string& line : report::unmet(r.metrics, ts)) {
      std::cerr << "mgk: run " << r.data.run.id << " fails --fail-under: " << line << "\n";
      code = ExitCode::kIncorrect;
    }
  return code;
}

// A run as the command line names it: its id, or its --name (bench runs).
int64_t run_id_of(store::Store& store, const std::string& text) {
  if (!text.empty() && text.find_first_not_of("0123456789") == std::string::npos) return std::stoll(text);
  if (auto r = store.run_named("bench", text)) return r->id;
  throw NotFoundError("no bench run is named '" + text + "' in " + store.path().string() +
                      " ('mgk history --runs' lists the runs and their names)");
}

ExitCode run_report(const ReportArgs& a, const Globals& g) {
  std::vector<report::Threshold> thresholds;  // checked before anything is read
  for (const std::string& t : a.fail_under) thresholds.push_back(report::parse_threshold(t));
  store::Store store = store::Store::open_read_only(
      database_path(g.db.empty() ? std::nullopt : std::optional<std::string>(g.db)));
  std::vector<int64_t> ids;
  for (const std::string& r : a.runs) ids.push_back(run_id_of(store, r));
  if (ids.empty()) {
    auto runs = store.runs_of_kind("bench");
    if (runs.empty()) throw UsageError("no bench run in " + store.path().string() + " ('mgk bench' makes one)");
    ids.push_back(runs.front().id);
  }
  if (a.vs) ids.push_back(a.vs);
  for (int64_t id : ids) {
    const auto r = store.run(id);
    if (r && r->kind != "bench")
      throw UsageError("run " + std::to_string(id) + " is " + (r->kind == "eval" ? "an " : "a ") + r->kind +
                       " run; 'mgk report' reads bench runs ('mgk show --run " + std::to_string(id) + "' shows this one)");
  }
  const NamePatterns only = NamePatterns::parse(a.problems, a.problems_file);
  const std::vector<report::RunReport> reports = report::build_comparison(store, ids, a.ps, only);
  for (const report::RunReport& r : reports)
    if (!r.left_out.empty())
      log::info("run " + std::to_string(r.data.run.id) + ": " + std::to_string(r.left_out.size()) +
                " problem(s) left out that another run lacks; every run is measured on the same " +
                std::to_string(r.metrics.suite.problems));
  const std::string text = render(reports, a.format);
  std::string out = a.out;
  if (out.empty() && a.format == "html") out = "report-" + std::to_string(ids.front()) + ".html";  // not for a terminal
  if (out.empty() || out == "-") {  // "-": standard output, whatever the format
    std::cout << text << std::flush;
  } else {
    std::ofstream f(out, std::ios::binary | std::ios::trunc);
    f << text;
    if (!f.flush()) throw UsageError("cannot write the report to " + out);
    std::cout << "wrote " << out << "\n" << std::flush;
  }
  return check_thresholds(reports, thresholds);
}

}  // namespace

void add_report_command(CLI::App& root, Globals& g) {
  auto a = std::make_shared<ReportArgs>();
  CLI::App* c = root.add_subcommand("report", "A bench run's pass@k, fast_p@k, speedups, costs and failures; plots");
  c->add_option("run", a->runs,
                "Bench runs, by id or --name (default: the latest bench run); several: side by side, a leaderboard, "
                "each on the problems every one of them has");
  c->add_option("--vs", a->vs, "A second run to compare with, side by side (as a second RUN)");
  CLI::Option* format =
      c->add_option("--format", a->format,
                    "table, md, json, csv, tex (the leaderboard as a LaTeX table) or html (one self-contained "
                    "file with plots)")
          ->check(CLI::IsMember({"table", "md", "json", "csv", "tex", "html"}))
          ->capture_default_str();
  c->add_flag("--json", a->json, "The same as --format json (as every command's --json)")->excludes(format);
  c->add_option("-o,--out", a->out, "Write to this file, '-' for standard output (html default: report-RUN.html)");
  c->add_option("--problems", a->problems,
                "Only these problems: names and globs, comma-separated, repeatable (as 'mgk bench --problems')");
  c->add_option("--problems-file", a->problems_file, "More problems to count, one name or glob per line ('#' comments)");
  c->add_option("--p", a->ps, "Extra speedup thresholds p for fast_p (0, 1, 1.5 and 2 are always shown)");
  c->add_option("--fail-under", a->fail_under,
                "For CI: exit 1 when a run's METRIC is under VALUE or unknown: pass@K=V, compiles@K=V, fast_P@K=V "
                "(V a fraction or a percentage: pass@1=0.5, fast_1.5@1=25%); repeatable");
  c->callback([a, &g] {
    if (a->json) a->format = "json";
    g.exit_code = run_report(*a, g);
  });
}

}  // namespace mgk::cli
