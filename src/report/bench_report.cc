#include "report/bench_report.h"

#include <algorithm>
#include <iterator>
#include <set>

#include "common/error.h"

namespace mgk::report {

RunReport build_report(store::Store& store, int64_t run_id, const std::vector<double>& extra_ps,
                       const NamePatterns& only) {
  RunReport r;
  r.data = load_run(store, run_id);
  std::erase_if(r.data.attempts, [&](const AttemptData& a) { return !only.matches(a.summary.problem); });
  for (const AttemptData& a : r.data.attempts) r.results.push_back(classify(a));
  // A bench run says how many samples it asked for; any other run counts what it holds.
  int samples = r.data.run.args.is_object() ? r.data.run.args.value("samples", 0) : 0;
  for (const AttemptResult& a : r.results) samples = std::max(samples, a.sample + 1);
  r.metrics = compute_metrics(r.results, samples, speedup_thresholds(extra_ps));
  return r;
}

namespace {

// The problems a run set out to do (a bench run's plan) and those it holds, of `only`.
std::set<std::string> problems_of(const RunReport& r, const NamePatterns& only) {
  std::set<std::string> names;
  const nlohmann::json& args = r.data.run.args;
  if (args.is_object() && args.contains("problem_list") && args["problem_list"].is_array())
    for (const auto& p : args["problem_list"])
      if (p.is_string() && only.matches(p.get<std::string>())) names.insert(p.get<std::string>());
  for (const AttemptData& a : r.data.attempts) names.insert(a.summary.problem);  // already of `only`
  return names;
}

}  // namespace

std::vector<RunReport> build_comparison(store::Store& store, const std::vector<int64_t>& run_ids,
                                        const std::vector<double>& extra_ps, const NamePatterns& only) {
  std::vector<RunReport> reports;
  for (int64_t id : run_ids) reports.push_back(build_report(store, id, extra_ps, only));
  if (reports.size() < 2) return reports;
  std::vector<std::set<std::string>> sets;
  for (const RunReport& r : reports) sets.push_back(problems_of(r, only));
  std::set<std::string> shared = sets.front();
  for (const auto& s : sets) {
    std::set<std::string> both;
    std::set_intersection(shared.begin(), shared.end(), s.begin(), s.end(), std::inserter(both, both.end()));
    shared = std::move(both);
  }
  if (shared.empty())
    throw UsageError("the runs share no problem, so they cannot be compared on the same problems ('mgk report RUN' "
                     "reports one; 'mgk history --runs' lists what each ran)");
  const NamePatterns on_shared{std::vector<std::string>(shared.begin(), shared.end())};
  for (size_t i = 0; i < reports.size(); ++i) {
    if (sets[i] == shared) continue;
    reports[i] = build_report(store, run_ids[i], extra_ps, on_shared);
    std::set_difference(sets[i].begin(), sets[i].end(), shared.begin(), shared.end(),
                        std::back_inserter(reports[i].left_out));
  }
  return reports;
}

std::string run_title(const RunReport& r) {
  const auto& run = r.data.run;
  const nlohmann::json& args = run.args;
  std::string mode = args.is_object() ? args.value("mode", "") : "";
  const std::string name = run.name();
  std::string t = "run " + std::to_string(run.id) + (name.empty() ? "" : " '" + name + "'") + " (" + run.model;
  if (!mode.empty()) t += ", " + mode;
  // A bench run names the problems it plans; any other run has those it stored.
  const size_t problems = args.is_object() && args.contains("problem_list") ? args["problem_list"].size()
                                                                             : r.metrics.problems.size();
  t += ", " + std::to_string(problems) + " problems x " + std::to_string(r.metrics.samples) + " samples)";
  return t;
}

}  // namespace mgk::report
