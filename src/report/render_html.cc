#include "report/render_html.h"

#include "report/provenance.h"

#include <algorithm>
#include <map>
#include <set>

#include "common/format.h"
#include "report/render_text.h"
#include "report/svg.h"
#include "report/table.h"
#include "store/history_table.h"

namespace mgk::report {
namespace {

using svg::escape;

constexpr const char* kStyle = R"css(
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1d2330; margin: 24px auto;
       max-width: 1200px; padding: 0 16px; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 17px; margin: 28px 0 8px; border-bottom: 1px solid #dde2ea; }
.meta { color: #5a6478; }
.banner { background: #fff6db; border: 1px solid #e8d48b; padding: 8px 12px; margin: 12px 0; border-radius: 4px; }
table { border-collapse: collapse; margin: 8px 0; }
th, td { border: 1px solid #dde2ea; padding: 3px 8px; text-align: right; vertical-align: top; }
th { background: #f3f5f9; } td.l, th.l { text-align: left; }
.plots { display: flex; flex-wrap: wrap; gap: 16px; }
svg.plot { background: #fff; border: 1px solid #dde2ea; border-radius: 4px; }
.plot-title { font-weight: 600; font-size: 14px; } .plot-note { fill: #8a5a00; font-size: 12px; }
.tick { font-size: 11px; fill: #5a6478; } .axis-label { font-size: 12px; fill: #1d2330; }
.legend { font-size: 12px; } .grid { stroke: #eef1f5; } .axis { stroke: #8792a6; }
.reference { stroke: #8792a6; stroke-dasharray: 4 3; }
details { border: 1px solid #dde2ea; border-radius: 4px; margin: 6px 0; padding: 4px 10px; }
summary { cursor: pointer; } pre { background: #f6f8fb; padding: 8px; overflow-x: auto; font-size: 12px; }
.o-correct { color: #1a7f37; font-weight: 600; } .o-unfinished { color: #8792a6; }
)css";

const std::map<Outcome, std::string>& outcome_colors() {
  static const std::map<Outcome, std::string> c = {
      {Outcome::kCorrect, "#2ca02c"},        {Outcome::kCompiled, "#98df8a"},  {Outcome::kWrong, "#d62728"},
      {Outcome::kHang, "#9467bd"},           {Outcome::kCrash, "#8c564b"},     {Outcome::kDidNotCompile, "#ff7f0e"},
      {Outcome::kRefused, "#e377c2"},        {Outcome::kNoKernel, "#7f7f7f"},  {Outcome::kInfrastructure, "#bcbd22"},
      {Outcome::kUnfinished, "#c7c7c7"}};
  return c;
}

std::string run_name(const RunReport& r) { return "run " + std::to_string(r.data.run.id) + " " + r.data.run.model; }

std::string anchor(const RunReport& r, const AttemptResult& a) {
  std::string p = a.problem;
  std::replace(p.begin(), p.end(), '/', '-');
  return "r" + std::to_string(r.data.run.id) + "-" + p + "-s" + std::to_string(a.sample);
}

std::string cell(const std::string& text, bool left = false) {
  return std::string("<td") + (left ? " class=\"l\"" : "") + ">" + text + "</td>";
}

// Every problem some run has, sorted.
std::vector<std::string> problem_names(const std::vector<RunReport>& runs) {
  std::set<std::string> names;
  for (const auto& r : runs)
    for (const auto& p : r.metrics.problems) names.insert(p.problem);
  return {names.begin(), names.end()};
}

std::optional<std::pair<double, double>> interval_of(const AtK& a) {
  if (!a.ci) return std::nullopt;
  return std::pair{a.ci->low, a.ci->high};
}

// Per problem, each run's speedup at every size of its fastest correct sample (the one the
// per-problem tables and the "best speedup" plot name by its slowest size): a kernel that
// wins at one size and loses at another shows here.
std::string size_plots(const std::vector<RunReport>& runs) {
  const std::vector<std::string> problems = problem_names(runs);
  std::string out;
  for (const std::string& problem : problems) {
    std::vector<std::string> sizes, names;
    std::vector<std::vector<std::optional<double>>> values;
    for (const auto& r : runs) {
      const AttemptResult* best = nullptr;
      for (const AttemptResult& a : r.results)
        if (a.problem == problem && a.outcome == Outcome::kCorrect && a.speedup && (!best || *a.speedup > *best->speedup))
          best = &a;
      names.push_back(run_name(r));
      std::vector<std::optional<double>> row(sizes.size());
      if (best)
        for (const SizeTiming& t : best->sizes) {
          auto at = std::find(sizes.begin(), sizes.end(), t.size);
          if (at == sizes.end()) {
            sizes.push_back(t.size);
            for (auto& v : values) v.emplace_back();
            row.emplace_back();
            at = sizes.end() - 1;
          }
          row[size_t(at - sizes.begin())] = t.speedup;
        }
      values.push_back(row);
    }
    bool any = false;
    for (const auto& v : values)
      for (const auto& x : v) any |= x.has_value();
    if (!any) continue;
    std::string id = "plot-size-speedup-" + problem;
    std::replace(id.begin(), id.end(), '/', '-');
    out += svg::bar_chart({id, problem + ": speedup at each size (the fastest correct sample)", "size preset",
                           "speedup over the reference", {}},
                          sizes, names, values, std::pair{1.0, std::string("1x: as fast as the reference")});
  }
  if (out.empty()) {
    std::vector<std::string> why;
    for (const auto& r : runs) why.push_back(run_name(r) + ": no timed correct kernel: " + r.metrics.timing);
    return svg::nothing_to_draw({"plot-size-speedup", "Speedup at each size, per problem", "", "", why});
  }
  return out;
}

std::string plots(const std::vector<RunReport>& runs) {
  std::string out = "<div class=\"plots\">\n";
  // fast_p@1 against p.
  {
    svg::Chart c{"plot-threshold", "Correct and faster than p (fast_p@1)", "speedup threshold p",
                 "problems solved by one sample", {}};
    std::vector<svg::Series> series;
    bool bars = false;
    for (size_t i = 0; i < runs.size(); ++i) {
      const RunReport& r = runs[i];
      auto curve = fast_p_curve(r.results, r.metrics);
      if (curve.empty()) c.notes.push_back(run_name(r) + ": no curve: " + r.metrics.timing);
      else curve.emplace_back(curve.back().first * 1.1 + 0.1, curve.back().second);
      series.push_back({run_name(r), curve, false, svg::series_color(i)});
      // fast_p@1 at the thresholds every report names, with its 95% interval.
      svg::Series marks{"", {}, false, svg::series_color(i), {}, false};
      for (const FastP& f : r.metrics.suite.fast)
        if (!curve.empty() && !f.at_k.empty() && f.at_k[0].value) {
          marks.points.emplace_back(f.p, *f.at_k[0].value);
          marks.intervals.push_back(interval_of(f.at_k[0]));
        }
      bars |= !marks.points.empty();
      series.push_back(marks);
    }
    if (bars) c.notes.push_back("bars: 95% bootstrap intervals of fast_p@1 at the reported p");
    out += svg::line_chart(c, series, 1.0, true, true);
  }
  // pass@k and compiles@k against k.
  {
    svg::Chart c{"plot-pass-at-k", "pass@k and compiles@k", "k (samples drawn)", "problems", {}};
    std::vector<svg::Series> series;
    for (size_t i = 0; i < runs.size(); ++i) {
      const RunReport& r = runs[i];
      svg::Series pass{run_name(r) + " pass@k", {}, false, svg::series_color(i)};
      svg::Series comp{run_name(r) + " compiles@k", {}, true, svg::series_color(i)};
      for (const AtK& a : r.metrics.suite.pass)
        if (a.value) pass.points.emplace_back(a.k, *a.value), pass.intervals.push_back(interval_of(a));
      for (const AtK& a : r.metrics.suite.compiled)
        if (a.value) comp.points.emplace_back(a.k, *a.value), comp.intervals.push_back(interval_of(a));
      if (pass.points.empty() && !comp.points.empty()) c.notes.push_back(run_name(r) + ": pass@k not run (--compile-only)");
      series.push_back(pass);
      series.push_back(comp);
    }
    c.notes.push_back("bars: 95% bootstrap intervals over problems and samples");
    out += svg::line_chart(c, series, 1.0, false, true);
  }
  // What the turns buy: pass@1 and compiles@1 after turn t.
  {
    svg::Chart c{"plot-turns", "pass@1, fast_1@1 and compiles@1 by turn", "turn t", "problems", {}};
    std::vector<svg::Series> series;
    for (size_t i = 0; i < runs.size(); ++i) {
      const RunReport& r = runs[i];
      svg::Series pass{run_name(r) + " pass@1", {}, false, svg::series_color(i)};
      svg::Series fast{run_name(r) + " fast_1@1", {}, false, svg::series_color(i)};
      fast.dotted = true;
      svg::Series comp{run_name(r) + " compiles@1", {}, true, svg::series_color(i)};
      for (const TurnPoint& t : r.metrics.per_turn) {
        if (t.pass) pass.points.emplace_back(t.turn, *t.pass);
        if (t.fast1) fast.points.emplace_back(t.turn, *t.fast1);
        comp.points.emplace_back(t.turn, t.compiles);
      }
      if (r.metrics.per_turn.empty()) c.notes.push_back(run_name(r) + ": no finished attempt");
      else if (pass.points.empty()) c.notes.push_back(run_name(r) + ": pass@1 not run (--compile-only)");
      else if (fast.points.empty()) c.notes.push_back(run_name(r) + ": fast_1@1 " + r.metrics.timing);
      if (!pass.points.empty()) series.push_back(pass);
      if (!fast.points.empty()) series.push_back(fast);
      series.push_back(comp);
    }
    out += svg::line_chart(c, series, 1.0, false, true);
  }
  // What an attempt cost against what it reached: one point per correct, timed attempt.
  {
    bool all_priced = true;
    for (const auto& r : runs)
      for (const AttemptResult& a : r.results) all_priced &= a.cost_usd.has_value();
    svg::Chart c{"plot-cost-speedup", "Cost of each attempt against its best speedup",
                 all_priced ? "cost of the attempt (USD)" : "tokens of the attempt (in + out; some costs unknown)",
                 "slowest-size speedup", {}};
    std::vector<svg::Series> series;
    for (size_t i = 0; i < runs.size(); ++i) {
      const RunReport& r = runs[i];
      svg::Series s{run_name(r), {}, false, svg::series_color(i)};
      s.line = false;
      for (const AttemptResult& a : r.results)
        if (a.outcome == Outcome::kCorrect && a.speedup)
          s.points.emplace_back(all_priced ? *a.cost_usd : double(a.tokens_in + a.tokens_out), *a.speedup);
      std::sort(s.points.begin(), s.points.end());
      if (s.points.empty()) c.notes.push_back(run_name(r) + ": no timed correct attempt: " + r.metrics.timing);
      series.push_back(s);
    }
    double y_max = 1;
    for (const auto& s : series)
      for (const auto& [x, y] : s.points) y_max = std::max(y_max, y * 1.1);
    out += svg::line_chart(c, series, y_max, false, false);
  }
  // Per problem: best speedup and best roofline fraction.
  const std::vector<std::string> problems = problem_names(runs);
  std::vector<std::string> names;
  std::vector<std::vector<std::optional<double>>> speedups, rooflines;
  std::vector<std::string> speed_notes, roof_notes;
  for (const auto& r : runs) {
    names.push_back(run_name(r));
    std::vector<std::optional<double>> s(problems.size()), f(problems.size());
    for (const auto& p : r.metrics.problems) {
      size_t i = size_t(std::find(problems.begin(), problems.end(), p.problem) - problems.begin());
      s[i] = p.best_speedup;
      f[i] = p.best_roofline_fraction;
    }
    if (r.metrics.correct_timed == 0) {
      speed_notes.push_back(run_name(r) + ": no speedup: " + r.metrics.timing);
      roof_notes.push_back(run_name(r) + ": no fraction: " + r.metrics.timing);
    } else if (r.metrics.with_roofline == 0) {
      roof_notes.push_back(run_name(r) + ": no fraction: this machine has no calibration ('mgk calibrate')");
    }
    speedups.push_back(s);
    rooflines.push_back(f);
  }
  out += svg::bar_chart({"plot-speedup", "Best speedup over the reference, per problem", "problem",
                         "slowest-size speedup", speed_notes},
                        problems, names, speedups, std::pair{1.0, std::string("1x: as fast as the reference")});
  out += svg::bar_chart({"plot-roofline", "Fraction of the communication-aware roofline, per problem", "problem",
                         "fraction of roofline", roof_notes},
                        problems, names, rooflines, std::pair{1.0, std::string("roofline")});
  // The failure taxonomy: the outcomes that occur in some run, each in the legend.
  {
    std::vector<Outcome> occurring;
    for (Outcome o : all_outcomes())
      for (const auto& r : runs)
        if (r.metrics.outcomes.count(o) && r.metrics.outcomes.at(o) > 0) {
          occurring.push_back(o);
          break;
        }
    std::vector<std::string> rows, segments, colors, notes;
    for (Outcome o : occurring) {
      segments.push_back(describe(o));
      colors.push_back(outcome_colors().at(o));
    }
    if (occurring.empty()) notes.push_back("no attempt yet");
    std::vector<std::vector<int>> counts;
    for (const auto& r : runs) {
      rows.push_back("run " + std::to_string(r.data.run.id));
      std::vector<int> row;
      for (Outcome o : occurring) row.push_back(r.metrics.outcomes.count(o) ? r.metrics.outcomes.at(o) : 0);
      counts.push_back(row);
    }
    out += svg::stacked_bars({"plot-outcomes", "What the attempts came to", "run", "attempts", notes}, rows, segments,
                             colors, counts);
  }
  out += "</div>\n<h2>Speedup at each size</h2>\n<div class=\"plots\">\n" + size_plots(runs);
  return out + "</div>\n";
}

std::string headline(const std::vector<RunReport>& runs) {
  int samples = 0;
  for (const auto& r : runs) samples = std::max(samples, r.metrics.samples);
  std::string h = "<table><tr><th class=\"l\">run</th><th class=\"l\">group</th><th>problems</th>";
  for (int k = 1; k <= samples; ++k) h += "<th>pass@" + std::to_string(k) + "</th>";
  for (int k = 1; k <= samples; ++k) h += "<th>compiles@" + std::to_string(k) + "</th>";
  h += "</tr>\n";
  std::string f = "<table><tr><th class=\"l\">run</th><th class=\"l\">group</th><th>p</th>";
  for (int k = 1; k <= samples; ++k) f += "<th>fast_p@" + std::to_string(k) + "</th>";
  f += "</tr>\n";
  for (const auto& r : runs) {
    std::vector<const GroupMetrics*> groups = {&r.metrics.suite};
    for (const auto& c : r.metrics.categories) groups.push_back(&c);
    for (const GroupMetrics* g : groups) {
      h += "<tr>" + cell(escape(run_name(r)), true) + cell(escape(g->name), true) + cell(std::to_string(g->problems));
      for (int k = 1; k <= samples; ++k) h += cell(at_k_text(g->pass, k, "not run", g->problems));
      for (int k = 1; k <= samples; ++k) h += cell(at_k_text(g->compiled, k, "-", g->problems));
      h += "</tr>\n";
      for (const FastP& fp : g->fast) {
        f += "<tr>" + cell(escape(run_name(r)), true) + cell(escape(g->name), true) + cell(fixed(fp.p, 2));
        for (int k = 1; k <= samples; ++k) f += cell(at_k_text(fp.at_k, k, "not timed", g->problems));
        f += "</tr>\n";
      }
    }
  }
  return "<h2>pass@k</h2>\n" + h + "</table>\n<h2>fast_p@k</h2>\n<p class=\"meta\">correct, and faster than the "
         "reference by more than p at every size (the slowest size counts); \"not timed\" where a correct sample "
         "has no timing.</p>\n" + f + "</table>\n";
}

std::string problem_table(const RunReport& r) {
  std::string t = "<table><tr><th class=\"l\">problem</th><th>ranks</th><th>correct / n</th><th>best speedup</th>"
                  "<th>roofline</th><th class=\"l\">samples</th></tr>\n";
  for (const ProblemMetrics& p : r.metrics.problems) {
    std::string links;
    for (size_t i : p.attempts) {
      const AttemptResult& a = r.results[i];
      links += "<a href=\"#" + anchor(r, a) + "\" class=\"o-" + to_string(a.outcome) + "\">s" +
               std::to_string(a.sample) + " " + describe(a.outcome) + "</a> ";
    }
    for (const AttemptResult& a : r.results)  // unfinished ones are not in p.attempts
      if (a.problem == p.problem && a.outcome == Outcome::kUnfinished)
        links += "<a href=\"#" + anchor(r, a) + "\" class=\"o-unfinished\">s" + std::to_string(a.sample) + " unfinished</a> ";
    t += "<tr>" + cell(escape(p.problem), true) + cell(std::to_string(p.world_size)) +
         cell(std::to_string(p.correct) + " / " + std::to_string(p.n)) + cell(best_speedup_text(p)) +
         cell(p.best_roofline_fraction ? fixed(*p.best_roofline_fraction, 2) : "-") + cell(links, true) + "</tr>\n";
  }
  return t + "</table>\n";
}

std::string details(const RunReport& r) {
  const RunMetrics& m = r.metrics;
  auto totals = [](const Totals& t) {
    return cell(token_count(double(t.tokens_in))) + cell(token_count(double(t.tokens_out))) +
           cell(store::format_cost(t.cost_usd)) + cell(duration(t.wall_s));
  };
  std::string out = "<table><tr><th class=\"l\"></th><th>tokens in</th><th>tokens out</th><th>cost</th><th>wall</th></tr>\n";
  out += "<tr>" + cell("the run (" + std::to_string(m.total.count) + " attempts)", true) + totals(m.total) + "</tr>\n";
  if (m.per_attempt) out += "<tr>" + cell("per finished attempt", true) + totals(*m.per_attempt) + "</tr>\n";
  if (m.per_solved)
    out += "<tr>" + cell("per solved problem (" + std::to_string(m.solved) + ")", true) + totals(*m.per_solved) + "</tr>\n";
  out += "</table>\n<p class=\"meta\">wall: model calls and evaluations, summed over turns (not queueing).</p>\n";
  out += "<p>speedup: " +
         (m.speedup_geomean ? "geometric mean " + store::format_speedup(m.speedup_geomean) + " over " +
                                  std::to_string(m.correct_timed) + " timed correct attempt(s)"
                            : std::string("none reported (") + escape(m.timing) + ")") +
         "; roofline fraction: " +
         (m.roofline_median ? "median " + fixed(*m.roofline_median, 2) + " over " + std::to_string(m.with_roofline)
                            : std::string("none")) +
         ".</p>\n";
  const FeatureCounts& f = m.features;
  if (f.kernels > 0) {
    out += "<p>Kernel design, detected from the source of " + std::to_string(f.kernels) + " " + escape(f.of) +
           " (a heuristic on what the code names):</p>\n<table><tr><th class=\"l\">choice</th><th class=\"l\">kernels</th></tr>\n";
    auto row = [&](const char* what, const std::map<std::string, int>& counts, const std::vector<std::string>& names) {
      out += "<tr>" + cell(what, true) + cell(escape(feature_counts_text(counts, names)), true) + "</tr>\n";
    };
    row("transfer", f.transfer, transfer_names());
    row("overlap", f.overlap, overlap_names());
    row("sync", f.sync, sync_names());
    out += "</table>\n";
  }
  return out;
}

std::string attempts(const RunReport& r) {
  std::string out;
  for (size_t i = 0; i < r.results.size(); ++i) {
    const AttemptResult& a = r.results[i];
    const AttemptData& d = r.data.attempts[i];
    out += "<details id=\"" + anchor(r, a) + "\"><summary><b>" + escape(a.problem) + "</b> sample " +
           std::to_string(a.sample) + ": <span class=\"o-" + to_string(a.outcome) + "\">" + describe(a.outcome) +
           "</span>" + (a.speedup ? " " + store::format_speedup(a.speedup) : "") +
           (a.outcome == Outcome::kCorrect && !a.speedup ? " (" + escape(no_speedup_because(a)) + ")" : "") +
           " &middot; " + std::to_string(a.turns) + " turn(s), " + store::format_cost(a.cost_usd) + ", attempt " +
           std::to_string(a.attempt_id) + " (<code>mgk show " + std::to_string(a.attempt_id) + "</code>)</summary>\n";
    out += "<table><tr><th>turn</th><th class=\"l\">action</th><th class=\"l\">verdict</th><th class=\"l\">message</th></tr>\n";
    for (const TurnVerdict& t : a.turn_verdicts)
      out += "<tr>" + cell(std::to_string(t.index + 1)) + cell(escape(t.action), true) +
             cell(escape(t.verdict.empty() ? "-" : t.verdict), true) + cell(escape(t.message), true) + "</tr>\n";
    out += "</table>\n";
    if (a.kernel_hash) {
      auto it = d.sources.find(*a.kernel_hash);
      if (it != d.sources.end()) {
        std::string features;
        if (a.features) {
          auto listed = [](const std::vector<std::string>& v) { return v.empty() ? std::string("none") : join(v); };
          features = " &middot; transfer: " + listed(a.features->transfer) + "; overlap: " + listed(a.features->overlap) +
                     "; sync: " + listed(a.features->sync);
        }
        out += "<p>The kernel this outcome rests on (" + escape(a.kernel_hash->substr(0, 12)) + ")" + features +
               ":</p>\n<pre><code>" + escape(it->second) + "</code></pre>\n";
      }
    }
    out += "</details>\n";
  }
  return out;
}

}  // namespace

const std::vector<std::string>& html_plot_ids() {
  static const std::vector<std::string> ids = {"plot-threshold", "plot-pass-at-k", "plot-turns", "plot-speedup",
                                               "plot-roofline", "plot-outcomes", "plot-cost-speedup"};
  return ids;
}

std::string render_html(const std::vector<RunReport>& runs) {
  std::string title = "mgk bench report";
  for (const auto& r : runs) title += (title.size() > 16 ? " vs " : ": ") + run_title(r);
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>" + escape(title) +
                    "</title>\n<style>" + kStyle + "</style></head>\n<body>\n<h1>" + escape(title) + "</h1>\n";
  for (const auto& r : runs) {
    const auto& run = r.data.run;
    out += "<p class=\"meta\">" + escape(run_title(r)) + ": status " + store::to_string(run.status) + ", started " +
           escape(run.created_at) + (run.ended_at ? ", ended " + escape(*run.ended_at) : "") + "; " +
           std::to_string(r.metrics.finished) + " counted attempt(s)" +
           escape(not_counted_text(r.metrics, run.id)) + ".</p>\n";
    out += "<ul class=\"meta provenance\">";
    for (const std::string& l : provenance_lines(run_provenance(r.data))) out += "<li>" + escape(l) + "</li>";
    out += "</ul>\n";
    if (r.metrics.timing != "timed")
      out += "<div class=\"banner\">" + escape(run_name(r)) + ": " + escape(r.metrics.timing) +
             (r.metrics.outcomes.count(Outcome::kCompiled)
                  ? ". Kernels that were only compiled may or may not be correct: pass@k says \"not run\", fast_p "
                    "\"not timed\"; compiles@k is what this run measures.</div>\n"
                  : ". Correct kernels that were not timed count for pass@k; they have no speedup, so fast_p and "
                    "the speedup plots say \"not timed\" instead of a number.</div>\n");
  }
  out += plots(runs);
  out += headline(runs);
  for (const auto& r : runs) {
    out += "<h2>Problems of " + escape(run_name(r)) + "</h2>\n" + problem_table(r);
    out += "<h2>Cost and design of " + escape(run_name(r)) + "</h2>\n" + details(r);
  }
  for (const auto& r : runs) out += "<h2>Attempts of " + escape(run_name(r)) + "</h2>\n" + attempts(r);
  return out + "</body></html>\n";
}

}  // namespace mgk::report
