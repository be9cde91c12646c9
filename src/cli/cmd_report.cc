// mgk report RUN: a bench run's metrics as a terminal table, Markdown, CSV, JSON or one
// self-contained HTML file with plots; --vs RUN_B puts a second run beside it.
#include <fstream>
#include <iostream>

#include "cli/commands.h"
#include "common/env.h"
#include "common/name_patterns.h"
#include "report/bench_report.h"
#include "report/render_data.h"
#include "report/render_html.h"
#include "report/render_text.h"
#include "store/store.h"

namespace mgk::cli {
namespace {

struct ReportArgs {
  int64_t run = 0, vs = 0;
  std::string format = "table", out, problems_file;
  std::vector<std::string> problems;
  std::vector<double> ps;
  bool json = false;
};

std::string render(const std::vector<report::RunReport>& runs, const std::string& format) {
  if (format == "table") return report::render_text(runs, false);
  if (format == "md") return report::render_text(runs, true);
  if (format == "json") return report::report_json(runs).dump(2) + "\n";
  if (format == "csv") return report::render_csv(runs);
  return report::render_html(runs);
}

void run_report(const ReportArgs& a, const Globals& g) {
  store::Store store = store::Store::open_read_only(
      database_path(g.db.empty() ? std::nullopt : std::optional<std::string>(g.db)));
  int64_t run = a.run;
  if (run == 0) {
    auto runs = store.runs_of_kind("bench");
    if (runs.empty()) throw UsageError("no bench run in " + store.path().string() + " ('mgk bench' makes one)");
    run = runs.front().id;
  }
  const NamePatterns only = NamePatterns::parse(a.problems, a.problems_file);
  std::vector<report::RunReport> reports;
  for (int64_t id : {run, a.vs}) {
    if (id == 0) continue;
    const auto r = store.run(id);
    if (r && r->kind != "bench")
      throw UsageError("run " + std::to_string(id) + " is " + (r->kind == "eval" ? "an " : "a ") + r->kind +
                       " run; 'mgk report' reads bench runs ('mgk show --run " + std::to_string(id) + "' shows this one)");
    reports.push_back(report::build_report(store, id, a.ps, only));
  }
  const std::string text = render(reports, a.format);
  std::string out = a.out;
  if (out.empty() && a.format == "html") out = "report-" + std::to_string(run) + ".html";  // not for a terminal
  if (out.empty() || out == "-") {  // "-": standard output, whatever the format
    std::cout << text;
    return;
  }
  std::ofstream f(out, std::ios::binary | std::ios::trunc);
  f << text;
  if (!f.flush()) throw UsageError("cannot write the report to " + out);
  std::cout << "wrote " << out << "\n";
}

}  // namespace

void add_report_command(CLI::App& root, Globals& g) {
  auto a = std::make_shared<ReportArgs>();
  CLI::App* c = root.add_subcommand("report", "A bench run's pass@k, fast_p@k, speedups, costs and failures; plots");
  c->add_option("run", a->run, "Bench run id (default: the latest bench run)");
  c->add_option("--vs", a->vs, "A second run to compare with, side by side");
  CLI::Option* format =
      c->add_option("--format", a->format, "table, md, json, csv or html (one self-contained file with plots)")
          ->check(CLI::IsMember({"table", "md", "json", "csv", "html"}))
          ->capture_default_str();
  c->add_flag("--json", a->json, "The same as --format json (as every command's --json)")->excludes(format);
  c->add_option("-o,--out", a->out, "Write to this file, '-' for standard output (html default: report-RUN.html)");
  c->add_option("--problems", a->problems,
                "Only these problems: names and globs, comma-separated, repeatable (as 'mgk bench --problems')");
  c->add_option("--problems-file", a->problems_file, "More problems to count, one name or glob per line ('#' comments)");
  c->add_option("--p", a->ps, "Extra speedup thresholds p for fast_p (0, 1, 1.5 and 2 are always shown)");
  c->callback([a, &g] {
    if (a->json) a->format = "json";
    run_report(*a, g);
    g.exit_code = ExitCode::kOk;
  });
}

}  // namespace mgk::cli
