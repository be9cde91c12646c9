#include "report/render_text.h"

#include "common/format.h"
#include "report/leaderboard.h"
#include "report/provenance.h"
#include "report/table.h"
#include "store/history_table.h"

namespace mgk::report {
namespace {

struct Writer {
  bool md;
  std::string out;
  void heading(const std::string& h) { out += md ? "\n## " + h + "\n\n" : "\n" + h + "\n"; }
  // Markdown: one list item per line (indented lines nest), so lines stay apart.
  void line(const std::string& l) {
    if (!md) {
      out += l + "\n";
      return;
    }
    size_t indent = l.find_first_not_of(' ');
    out += l.substr(0, indent) + "- " + l.substr(indent) + "\n";
  }
  void table(const Table& t) { out += md ? t.markdown() : t.text(); }
};

std::string run_label(const RunReport& r) { return "run " + std::to_string(r.data.run.id); }

// A run of a comparison: what it lost so that every run counts the same problems.
std::string left_out_line(const RunReport& r) {
  std::string names;
  for (const std::string& p : r.left_out) names += (names.empty() ? "" : ", ") + p;
  return "compared on the " + std::to_string(r.metrics.suite.problems) + " problem(s) every run has: " +
         std::to_string(r.left_out.size()) + " of this run's left out (" + names + ")";
}

// Several runs: one row each, the numbers a paper's table takes.
void leaderboard(Writer& w, const std::vector<RunReport>& runs) {
  w.heading("leaderboard (each run on the problems every run has; [the 95% interval])");
  Table t({"RUN", "MODEL", "MODE", "PROBLEMS", "pass@1", "fast_1@1", "fast_2@1", "compiles@1", "COST"},
          {false, false, false, true, true, true, true, true, true});
  auto cell = [](const AtK* a, const std::string& unknown) {
    return a ? at_k_text({*a}, 1, unknown) : std::string("-");
  };
  for (const LeaderboardRow& row : leaderboard_rows(runs))
    t.add({"run " + std::to_string(row.run) + (row.name.empty() ? "" : " '" + row.name + "'"), row.model,
           row.mode.empty() ? "-" : row.mode, std::to_string(row.problems), cell(row.pass1, "not run"), cell(row.fast1, "not timed"),
           cell(row.fast2, "not timed"), cell(row.compiles1, "-"), store::format_cost(row.cost_usd)});
  w.table(t);
}

// pass@k, compiles@k and fast_p@k of the suite and of each category, one row per group
// (and per run).
void headline(Writer& w, const std::vector<RunReport>& runs) {
  int samples = 0;
  for (const auto& r : runs) samples = std::max(samples, r.metrics.samples);
  std::vector<std::string> header = {"RUN", "GROUP", "PROBLEMS"};
  for (int k = 1; k <= samples; ++k) header.push_back("pass@" + std::to_string(k));
  for (int k = 1; k <= samples; ++k) header.push_back("compiles@" + std::to_string(k));
  std::vector<bool> right(header.size(), true);
  right[0] = right[1] = false;
  Table t(header, right);
  auto row = [&](const RunReport& r, const GroupMetrics& g) {
    std::vector<std::string> cells = {run_label(r), g.name, std::to_string(g.problems)};
    for (int k = 1; k <= samples; ++k)
      cells.push_back(at_k_text(g.pass, k, "not run", g.problems));
    for (int k = 1; k <= samples; ++k)
      cells.push_back(at_k_text(g.compiled, k, "-", g.problems));
    t.add(cells);
  };
  for (const auto& r : runs) {
    row(r, r.metrics.suite);
    if (r.metrics.categories.size() > 1)
      for (const auto& c : r.metrics.categories) row(r, c);
  }
  w.table(t);

  w.heading("fast_p@k (correct and faster than the reference by more than p at every size)");
  std::vector<std::string> fh = {"RUN", "GROUP", "p"};
  for (int k = 1; k <= samples; ++k) fh.push_back("fast_p@" + std::to_string(k));
  Table f(fh, right);
  for (const auto& r : runs) {
    std::vector<const GroupMetrics*> groups = {&r.metrics.suite};
    if (r.metrics.categories.size() > 1)
      for (const auto& c : r.metrics.categories) groups.push_back(&c);
    for (const GroupMetrics* g : groups)
      for (const FastP& fp : g->fast) {
        std::vector<std::string> cells = {run_label(r), g->name, fixed(fp.p, fp.p == int(fp.p) ? 0 : 2)};
        for (int k = 1; k <= samples; ++k)
          cells.push_back(at_k_text(fp.at_k, k, "not timed", g->problems));
        f.add(cells);
      }
  }
  w.table(f);
}

// pass@1 and compiles@1 after each turn: what the turns of the agent buy.
void turns(Writer& w, const std::vector<RunReport>& runs) {
  size_t most = 0;
  for (const auto& r : runs) most = std::max(most, r.metrics.per_turn.size());
  if (most == 0) return;
  w.heading("by turn (share of samples with a correct kernel, one faster than the reference, or one that compiled, by "
            "turn t; averaged over problems)");
  std::vector<std::string> header = {"RUN", "METRIC"};
  for (size_t t = 1; t <= most; ++t) header.push_back("t=" + std::to_string(t));
  std::vector<bool> right(header.size(), true);
  right[0] = right[1] = false;
  Table table(header, right);
  for (const auto& r : runs) {
    std::vector<std::string> pass = {run_label(r), "pass@1"}, fast = {run_label(r), "fast_1@1"},
                             comp = {run_label(r), "compiles@1"};
    for (size_t t = 0; t < most; ++t) {
      const bool has = t < r.metrics.per_turn.size();
      const TurnPoint* p = has ? &r.metrics.per_turn[t] : nullptr;
      pass.push_back(!p ? "-" : p->pass ? percent(p->pass) : "not run");
      fast.push_back(!p ? "-" : p->fast1 ? percent(p->fast1) : p->pass ? "not timed" : "not run");
      comp.push_back(p ? percent(p->compiles) : "-");
    }
    table.add(pass);
    table.add(fast);
    table.add(comp);
  }
  w.table(table);
}

// Each problem's fastest correct sample at every size: the slowest-size rule (BEST, fast_p)
// hides a kernel that wins at one size and loses at another.
void per_size(Writer& w, const std::vector<RunReport>& runs) {
  Table t({"RUN", "PROBLEM", "SIZE", "REFERENCE us", "KERNEL us", "SPEEDUP", "LINK GB/s"},
          {false, false, false, true, true, true, true});
  auto opt_text = [](const std::optional<double>& v, int digits, const char* unit = "") {
    return v ? fixed(*v, digits) + unit : std::string("-");
  };
  for (const auto& r : runs)
    for (const auto& p : r.metrics.problems) {
      const AttemptResult* best = nullptr;
      for (size_t i : p.attempts) {
        const AttemptResult& a = r.results[i];
        if (a.sizes.empty() || !a.speedup) continue;
        if (!best || *a.speedup > *best->speedup) best = &a;
      }
      if (!best) continue;
      for (const SizeTiming& s : best->sizes)
        t.add({run_label(r), p.problem, s.size, opt_text(s.reference_us, 1), opt_text(s.kernel_us, 1),
               s.speedup ? fixed(*s.speedup, 2) + "x" : "not credible", opt_text(s.link_gbps, 1)});
    }
  if (t.empty()) return;
  w.heading("per size (each problem's fastest correct sample; BEST and fast_p take its slowest size; LINK: the "
            "cost model's link bytes over the kernel's time, nccl-tests' busbw for collectives)");
  w.table(t);
}

void per_problem(Writer& w, const std::vector<RunReport>& runs) {
  std::vector<std::string> header = {"PROBLEM", "W"};
  for (const auto& r : runs) {
    std::string l = runs.size() > 1 ? " " + run_label(r) : "";
    header.insert(header.end(), {"CORRECT/N" + l, "BEST" + l, "ROOFLINE" + l, "OUTCOMES" + l});
  }
  std::vector<bool> right = {false, true};
  for (size_t i = 0; i < runs.size(); ++i) right.insert(right.end(), {true, true, true, false});
  Table t(header, right);
  std::map<std::string, std::vector<const ProblemMetrics*>> rows;  // problem -> per run
  for (size_t i = 0; i < runs.size(); ++i)
    for (const auto& p : runs[i].metrics.problems) {
      auto& v = rows[p.problem];
      v.resize(runs.size(), nullptr);
      v[i] = &p;
    }
  for (const auto& [name, per_run] : rows) {
    int world = 0;
    for (const auto* p : per_run)
      if (p) world = std::max(world, p->world_size);
    std::vector<std::string> cells = {name, std::to_string(world)};
    for (size_t i = 0; i < runs.size(); ++i) {
      const ProblemMetrics* p = per_run[i];
      if (!p) {
        cells.insert(cells.end(), {"-", "-", "-", "-"});
        continue;
      }
      std::string outcomes;
      for (size_t a : p->attempts) outcomes += (outcomes.empty() ? "" : ", ") + std::string(describe(runs[i].results[a].outcome));
      cells.insert(cells.end(), {std::to_string(p->correct) + "/" + std::to_string(p->n), best_speedup_text(*p),
                                 p->best_roofline_fraction ? fixed(*p->best_roofline_fraction, 2) : "-",
                                 outcomes.empty() ? "(none finished)" : outcomes});
    }
    t.add(cells);
  }
  w.table(t);
}

void details(Writer& w, const RunReport& r) {
  const RunMetrics& m = r.metrics;
  std::string outcomes;
  for (Outcome o : all_outcomes())
    if (m.outcomes.count(o)) outcomes += (outcomes.empty() ? "" : ", ") + std::string(describe(o)) + " " + std::to_string(m.outcomes.at(o));
  w.line("outcomes of " + std::to_string(m.finished) + " counted attempt(s)" + not_counted_text(m, r.data.run.id) +
         ": " + (outcomes.empty() ? "none" : outcomes));
  const std::string below_floor =
      m.below_floor ? "; " + std::to_string(m.below_floor) +
                          " more timed under the timing floor (an empty kernel) at some size: no speedup, fast at no p"
                    : "";
  if (m.speedup_geomean)
    w.line("speedup: geometric mean " + store::format_speedup(m.speedup_geomean) + " over " +
           std::to_string(m.correct_timed - m.below_floor) +
           " timed correct attempt(s) (each its best kernel's slowest size)" + below_floor);
  else if (m.below_floor)
    w.line("speedup: none reported" + below_floor);
  else if (m.correct_not_timed > 0)
    w.line("speedup: none reported: the " + std::to_string(m.correct_not_timed) +
           " correct attempt(s) were checked, not timed");
  if (m.roofline_median)
    w.line("roofline: median fraction " + fixed(*m.roofline_median, 2) + " over " + std::to_string(m.with_roofline) +
           " timed correct attempt(s)");
  else if (m.correct_timed > 0)
    w.line("roofline: no fraction (no calibration of this machine: run 'mgk calibrate')");
  auto totals = [](const Totals& t) {
    return token_count(double(t.tokens_in)) + " tokens in / " + token_count(double(t.tokens_out)) + " out, " +
           store::format_cost(t.cost_usd) + ", " + duration(t.wall_s);
  };
  w.line("cost: " + totals(m.total) + " (wall: model calls and evaluations, not queueing)");
  if (m.per_attempt) w.line("  per finished attempt: " + totals(*m.per_attempt));
  if (m.per_solved)
    w.line("  per solved problem (" + std::to_string(m.solved) + " solved): " + totals(*m.per_solved));
  else
    w.line("  per solved problem: no problem solved");
  const FeatureCounts& f = m.features;
  if (f.kernels > 0) {
    w.line("kernel design, detected from the source of " + std::to_string(f.kernels) + " " + f.of + ":");
    w.line("  transfer: " + feature_counts_text(f.transfer, transfer_names()));
    w.line("  overlap: " + feature_counts_text(f.overlap, overlap_names()));
    w.line("  sync: " + feature_counts_text(f.sync, sync_names()));
  }
}

}  // namespace

std::string at_k_text(const std::vector<AtK>& values, int k, const std::string& unknown, int group_problems) {
  if (k < 1 || k > int(values.size()) || values[size_t(k - 1)].problems == 0) return "-";
  const AtK& a = values[size_t(k - 1)];
  const std::string over = a.problems < group_problems
                               ? " (" + std::to_string(a.problems) + "/" + std::to_string(group_problems) + ")"
                               : "";
  // The 95% interval (report/intervals.h) where the value has one and it is not a point.
  const std::string ci = a.value && a.ci && a.ci->high > a.ci->low
                             ? " [" + fixed(a.ci->low * 100, 0) + "–" + fixed(a.ci->high * 100, 0) + "]"
                             : "";
  return (a.value ? percent(a.value) : unknown) + ci + over;
}

std::string not_counted_text(const RunMetrics& m, int64_t run_id) {
  if (m.unfinished == 0 && m.infrastructure == 0) return "";
  std::string s = ", ";
  if (m.unfinished) s += std::to_string(m.unfinished) + " unfinished";
  if (m.unfinished && m.infrastructure) s += " and ";
  if (m.infrastructure) s += std::to_string(m.infrastructure) + " cut short by the provider or the evaluator (infrastructure)";
  s += ", not counted";
  if (m.infrastructure)
    s += " ('mgk bench --resume " + std::to_string(run_id) + " --retry-failed' runs " +
         (m.infrastructure == 1 ? "that one" : "those") + " again)";
  return s;
}

std::string best_speedup_text(const ProblemMetrics& p) {
  if (p.best_speedup) return store::format_speedup(p.best_speedup);
  return p.correct_not_timed > 0 ? "not timed" : "-";
}

std::string feature_counts_text(const std::map<std::string, int>& counts, const std::vector<std::string>& names) {
  auto count = [&](const std::string& n) { return std::to_string(counts.count(n) ? counts.at(n) : 0); };
  std::string s;
  for (const auto& n : names) s += n + " " + count(n) + ", ";
  return s + "none " + count("none");
}

std::string render_text(const std::vector<RunReport>& runs, bool markdown) {
  Writer w{markdown, ""};
  for (const auto& r : runs) {
    const auto& run = r.data.run;
    w.out += markdown ? "# mgk bench report: " + run_title(r) + "\n\n" : "mgk bench report: " + run_title(r) + "\n";
    w.line("status " + std::string(store::to_string(run.status)) + ", started " + run.created_at +
           (run.ended_at ? ", ended " + *run.ended_at : ""));
    std::string why;
    if (r.metrics.correct_not_timed > 0) why = " (no speedup is reported for those: fast_p says \"not timed\")";
    if (r.metrics.outcomes.count(Outcome::kCompiled))
      why = " (pass@k says \"not run\" and fast_p \"not timed\"; compiles@k is what such a run measures)";
    w.line("timing: " + r.metrics.timing + why);
    for (const std::string& l : provenance_lines(run_provenance(r.data))) w.line(l);
    if (!r.left_out.empty()) w.line(left_out_line(r));
  }
  if (runs.size() > 1) leaderboard(w, runs);
  w.heading("pass@k (unbiased estimator over the finished samples of each problem; [the 95% bootstrap interval over problems and samples])");
  headline(w, runs);
  turns(w, runs);
  w.heading("per problem (BEST: the fastest correct sample's slowest-size speedup)");
  per_problem(w, runs);
  per_size(w, runs);
  for (const auto& r : runs) {
    w.heading(runs.size() > 1 ? "details of " + run_label(r) : "details");
    details(w, r);
  }
  return w.out;
}

}  // namespace mgk::report
