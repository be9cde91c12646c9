#include "report/render_data.h"

#include "report/provenance.h"

#include <sstream>

#include "common/format.h"
#include "store/records_json.h"

namespace mgk::report {
namespace {

nlohmann::json opt(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }

nlohmann::json at_k_json(const std::vector<AtK>& v) {
  nlohmann::json a = nlohmann::json::array();
  for (const AtK& x : v)
    a.push_back({{"k", x.k},
                 {"value", opt(x.value)},
                 {"ci95", x.ci ? nlohmann::json::array({x.ci->low, x.ci->high}) : nlohmann::json(nullptr)},
                 {"problems", x.problems},
                 {"unknown", x.unknown}});
  return a;
}

nlohmann::json fast_json(const std::vector<FastP>& v) {
  nlohmann::json a = nlohmann::json::array();
  for (const FastP& f : v) a.push_back({{"p", f.p}, {"at_k", at_k_json(f.at_k)}});
  return a;
}

nlohmann::json group_json(const GroupMetrics& g) {
  return {{"name", g.name},
          {"problems", g.problems},
          {"pass_at_k", at_k_json(g.pass)},
          {"compiles_at_k", at_k_json(g.compiled)},
          {"fast_p_at_k", fast_json(g.fast)}};
}

nlohmann::json totals_json(const Totals& t) {
  return {{"count", t.count}, {"tokens_in", t.tokens_in}, {"tokens_out", t.tokens_out},
          {"cost_usd", opt(t.cost_usd)}, {"wall_s", t.wall_s}};
}

nlohmann::json features_json(const KernelFeatures& f) {
  return {{"transfer", f.transfer}, {"overlap", f.overlap}, {"sync", f.sync}};
}

nlohmann::json attempt_json(const AttemptResult& r) {
  nlohmann::json turns = nlohmann::json::array();
  for (const TurnVerdict& t : r.turn_verdicts)
    turns.push_back({{"turn", t.index}, {"action", t.action}, {"verdict", t.verdict}});
  nlohmann::json j{{"attempt_id", r.attempt_id},
                   {"sample", r.sample},
                   {"world_size", r.world_size},
                   {"outcome", to_string(r.outcome)},
                   {"exit_reason", r.exit_reason},
                   {"timed", r.timed},
                   {"credible", r.credible},
                   {"not_timed_because", r.not_timed_because},
                   {"speedup", opt(r.speedup)},
                   {"roofline_fraction", opt(r.roofline_fraction)},
                   {"kernel_hash", r.kernel_hash ? nlohmann::json(*r.kernel_hash) : nlohmann::json(nullptr)},
                   {"features", r.features ? features_json(*r.features) : nlohmann::json(nullptr)},
                   {"turns", r.turns},
                   {"tokens_in", r.tokens_in},
                   {"tokens_out", r.tokens_out},
                   {"cost_usd", opt(r.cost_usd)},
                   {"wall_s", r.wall_s},
                   {"turn_verdicts", turns}};
  nlohmann::json sizes = nlohmann::json::array();
  for (const SizeTiming& t : r.sizes)
    sizes.push_back({{"size", t.size},
                     {"reference_us", opt(t.reference_us)},
                     {"kernel_us", opt(t.kernel_us)},
                     {"speedup", opt(t.speedup)},
                     {"link_gbps", opt(t.link_gbps)}});
  j["sizes"] = sizes;
  return j;
}

nlohmann::json problems_json(const RunReport& r) {
  nlohmann::json a = nlohmann::json::array();
  for (const ProblemMetrics& p : r.metrics.problems) {
    nlohmann::json attempts = nlohmann::json::array();
    for (size_t i : p.attempts) attempts.push_back(attempt_json(r.results[i]));
    a.push_back({{"problem", p.problem},
                 {"category", p.category},
                 {"world_size", p.world_size},
                 {"n", p.n},
                 {"correct", p.correct},
                 {"compiles", p.compiles},
                 {"not_run", p.not_run},
                 {"correct_not_timed", p.correct_not_timed},
                 {"best_speedup", opt(p.best_speedup)},
                 {"best_roofline_fraction", opt(p.best_roofline_fraction)},
                 {"pass_at_k", at_k_json(p.pass)},
                 {"compiles_at_k", at_k_json(p.compiled)},
                 {"fast_p_at_k", fast_json(p.fast)},
                 {"attempts", attempts}});
  }
  return a;
}

}  // namespace

nlohmann::json summary_json(const RunMetrics& m) {
  nlohmann::json outcomes = nlohmann::json::object();
  for (Outcome o : all_outcomes()) outcomes[to_string(o)] = m.outcomes.count(o) ? m.outcomes.at(o) : 0;
  nlohmann::json categories = nlohmann::json::array();
  for (const auto& c : m.categories) categories.push_back(group_json(c));
  nlohmann::json turns = nlohmann::json::array();
  for (const TurnPoint& t : m.per_turn)
    turns.push_back(
        {{"turn", t.turn}, {"pass_at_1", opt(t.pass)}, {"fast_1_at_1", opt(t.fast1)}, {"compiles_at_1", t.compiles}});
  return {{"samples", m.samples},
          {"per_turn", turns},
          {"thresholds", m.ps},
          {"finished", m.finished},
          {"unfinished", m.unfinished},
          {"infrastructure", m.infrastructure},
          {"below_floor", m.below_floor},
          {"timing", m.timing},
          {"suite", group_json(m.suite)},
          {"categories", categories},
          {"correct", m.correct},
          {"correct_timed", m.correct_timed},
          {"correct_not_timed", m.correct_not_timed},
          {"speedup_geomean", opt(m.speedup_geomean)},
          {"roofline_median", opt(m.roofline_median)},
          {"with_roofline", m.with_roofline},
          {"solved", m.solved},
          {"total", totals_json(m.total)},
          {"per_attempt", m.per_attempt ? totals_json(*m.per_attempt) : nlohmann::json(nullptr)},
          {"per_solved_problem", m.per_solved ? totals_json(*m.per_solved) : nlohmann::json(nullptr)},
          {"outcomes", outcomes},
          {"features",
           {{"of", m.features.of},
            {"kernels", m.features.kernels},
            {"transfer", m.features.transfer},
            {"overlap", m.features.overlap},
            {"sync", m.features.sync}}}};
}

nlohmann::json report_json(const std::vector<RunReport>& runs) {
  nlohmann::json out{{"format", "mgk-bench-report/1"}, {"runs", nlohmann::json::array()}};
  for (const RunReport& r : runs) {
    nlohmann::json run = r.data.run;  // store/records_json.h
    run.erase("summary");             // the metrics below are the summary, recomputed
    out["runs"].push_back({{"run", run},
                           {"provenance", run_provenance(r.data)},
                           {"metrics", summary_json(r.metrics)},
                           {"problems", problems_json(r)},
                           {"left_out", r.left_out}});
  }
  return out;
}

namespace {

std::string csv_cell(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string number(const std::optional<double>& known) {
  if (!known) return "";  // CSV: an empty value, with the note saying why
  const double v = *known;
  std::ostringstream o;
  o.precision(10);
  o << v;
  return o.str();
}

struct CsvWriter {
  std::string out = "run,scope,name,sample,metric,k,p,value,note\n";
  int64_t run = 0;
  void row(const std::string& scope, const std::string& name, const std::string& sample, const std::string& metric,
           const std::string& k, const std::string& p, const std::string& value, const std::string& note = "") {
    out += std::to_string(run) + "," + scope + "," + csv_cell(name) + "," + sample + "," + metric + "," + k + "," +
           p + "," + csv_cell(value) + "," + csv_cell(note) + "\n";
  }
  void value(const std::string& scope, const std::string& name, const std::string& sample, const std::string& metric,
             const std::optional<double>& v, const std::string& absent_note = "") {
    row(scope, name, sample, metric, "", "", v ? number(*v) : "", v ? "" : absent_note);
  }
  // Tidy, one number a row: the value, then its 95% interval's ends as metrics of their own.
  void at_k(const std::string& scope, const std::string& name, const std::string& metric, const std::vector<AtK>& v,
            const std::string& unknown, const std::string& p = "") {
    for (const AtK& a : v) {
      row(scope, name, "", metric, std::to_string(a.k), p, a.value ? number(*a.value) : "",
          a.value ? std::to_string(a.problems) + " problem(s)" : a.problems == 0 ? "no problem has k samples" : unknown);
      if (!a.ci) continue;
      row(scope, name, "", metric + "_ci95_low", std::to_string(a.k), p, number(a.ci->low), "bootstrap");
      row(scope, name, "", metric + "_ci95_high", std::to_string(a.k), p, number(a.ci->high), "bootstrap");
    }
  }
  // By turn: the turn in the k column.
  void turns(const std::vector<TurnPoint>& points) {
    for (const TurnPoint& t : points) {
      row("suite", "all", "", "pass_at_1_by_turn", std::to_string(t.turn), "", t.pass ? number(*t.pass) : "",
          t.pass ? "k is the turn" : "not run");
      row("suite", "all", "", "fast_1_at_1_by_turn", std::to_string(t.turn), "", t.fast1 ? number(*t.fast1) : "",
          t.fast1 ? "k is the turn" : "not timed");
      row("suite", "all", "", "compiles_at_1_by_turn", std::to_string(t.turn), "", number(t.compiles), "k is the turn");
    }
  }
  void group(const std::string& scope, const GroupMetrics& g) {
    row(scope, g.name, "", "problems", "", "", std::to_string(g.problems));
    at_k(scope, g.name, "pass_at_k", g.pass, "not run");
    at_k(scope, g.name, "compiles_at_k", g.compiled, "");
    for (const FastP& f : g.fast) at_k(scope, g.name, "fast_p_at_k", f.at_k, "not timed", number(f.p));
  }
  void totals(const std::string& name, const Totals& t) {
    row("suite", "all", "", name + "_count", "", "", std::to_string(t.count));
    row("suite", "all", "", name + "_tokens_in", "", "", std::to_string(t.tokens_in));
    row("suite", "all", "", name + "_tokens_out", "", "", std::to_string(t.tokens_out));
    row("suite", "all", "", name + "_cost_usd", "", "", number(t.cost_usd), t.cost_usd ? "" : "unknown: no price");
    row("suite", "all", "", name + "_wall_s", "", "", number(t.wall_s));
  }
};

}  // namespace

std::string render_csv(const std::vector<RunReport>& runs) {
  CsvWriter w;
  for (const RunReport& r : runs) {
    const RunMetrics& m = r.metrics;
    w.run = r.data.run.id;
    w.group("suite", m.suite);
    for (const auto& c : m.categories) w.group("category", c);
    w.turns(m.per_turn);
    w.value("suite", "all", "", "speedup_geomean", m.speedup_geomean, "no timed correct attempt");
    w.value("suite", "all", "", "roofline_median", m.roofline_median, "no timed correct attempt with a calibration");
    w.row("suite", "all", "", "correct_not_timed", "", "", std::to_string(m.correct_not_timed));
    w.row("suite", "all", "", "solved", "", "", std::to_string(m.solved));
    w.totals("total", m.total);
    if (m.per_attempt) w.totals("per_attempt", *m.per_attempt);
    if (m.per_solved) w.totals("per_solved_problem", *m.per_solved);
    for (Outcome o : all_outcomes())
      w.row("suite", "all", "", std::string("outcome_") + to_string(o), "", "",
            std::to_string(m.outcomes.count(o) ? m.outcomes.at(o) : 0));
    for (const auto& [kind, counts] : {std::pair{"transfer", &m.features.transfer},
                                       std::pair{"overlap", &m.features.overlap}, std::pair{"sync", &m.features.sync}})
      for (const auto& [name, n] : *counts)
        w.row("suite", "all", "", std::string("kernels_") + kind + "_" + name, "", "", std::to_string(n), m.features.of);
    for (const ProblemMetrics& p : m.problems) {
      w.row("problem", p.problem, "", "n", "", "", std::to_string(p.n));
      w.row("problem", p.problem, "", "correct", "", "", std::to_string(p.correct));
      w.value("problem", p.problem, "", "best_speedup", p.best_speedup, p.correct_not_timed ? "not timed" : "");
      w.value("problem", p.problem, "", "best_roofline_fraction", p.best_roofline_fraction);
      w.at_k("problem", p.problem, "pass_at_k", p.pass, "not run");
      for (const FastP& f : p.fast) w.at_k("problem", p.problem, "fast_p_at_k", f.at_k, "not timed", number(f.p));
      for (size_t i : p.attempts) {
        const AttemptResult& a = r.results[i];
        const std::string s = std::to_string(a.sample);
        w.row("attempt", a.problem, s, "outcome", "", "", to_string(a.outcome), a.exit_reason);
        w.value("attempt", a.problem, s, "speedup", a.speedup, no_speedup_because(a));
        w.value("attempt", a.problem, s, "roofline_fraction", a.roofline_fraction);
        w.row("attempt", a.problem, s, "turns", "", "", std::to_string(a.turns));
        w.row("attempt", a.problem, s, "tokens_in", "", "", std::to_string(a.tokens_in));
        w.row("attempt", a.problem, s, "tokens_out", "", "", std::to_string(a.tokens_out));
        w.row("attempt", a.problem, s, "cost_usd", "", "", number(a.cost_usd), a.cost_usd ? "" : "unknown: no price");
        w.row("attempt", a.problem, s, "wall_s", "", "", number(a.wall_s));
      }
    }
  }
  return w.out;
}

}  // namespace mgk::report
