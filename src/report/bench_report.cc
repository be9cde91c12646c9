#include "report/bench_report.h"

#include <algorithm>

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

std::string run_title(const RunReport& r) {
  const auto& run = r.data.run;
  const nlohmann::json& args = run.args;
  std::string mode = args.is_object() ? args.value("mode", "") : "";
  std::string t = "run " + std::to_string(run.id) + " (" + run.model;
  if (!mode.empty()) t += ", " + mode;
  // A bench run names the problems it plans; any other run has those it stored.
  const size_t problems = args.is_object() && args.contains("problem_list") ? args["problem_list"].size()
                                                                             : r.metrics.problems.size();
  t += ", " + std::to_string(problems) + " problems x " + std::to_string(r.metrics.samples) + " samples)";
  return t;
}

}  // namespace mgk::report
