#include "bench_run/array_task.h"

#include <cstdio>
#include <iostream>
#include <set>

#include "bench_run/run_here.h"
#include "bench_run/station.h"
#include "common/file.h"
#include "common/interrupt.h"

namespace mgk::bench_run {

// One array task of a Slurm run, as its script calls it: shard K/N of the run --run-file
// describes, run here into the store --db names (the task's own). The shard's run keeps the
// run's uuid, so that merging folds it into the run; it is left "running" (a shard ends no
// run: the run is done when its merged shards hold every attempt, `mgk bench --merge`).
ExitCode run_array_task(const Request& a, const std::function<store::Store()>& open_store) {
  int k = -1, n = 0;
  if (std::sscanf(a.shard.c_str(), "%d/%d", &k, &n) != 2 || a.run_file.empty())
    throw UsageError("--shard takes K/N (0 <= K < N), with --run-file: what a Slurm run's script gives");
  const nlohmann::json run = nlohmann::json::parse(read_file(a.run_file, "the run file", ExitCode::kUsage), nullptr, false);
  if (!run.is_object() || !run.contains("args") || !run.contains("uuid"))
    throw UsageError(a.run_file + " is not a run file 'mgk bench --executor slurm' wrote");
  const int64_t run_id = run.value("run", int64_t(0));
  const std::string uuid = run.value("uuid", ""), what = "mgk bench run " + std::to_string(run_id) + ", task " + a.shard;
  BenchSpec spec = BenchSpec::from_json(run["args"], run_id);
  const std::vector<AttemptKey> planned =
      shard_of(planned_attempts(spec.problem_list, spec.samples), k, n);
  std::set<std::string> mine;  // the problems of this shard: the references this task compiles
  for (const auto& key : planned) mine.insert(key.problem);
  spec.problem_list.assign(mine.begin(), mine.end());

  store::Store store = open_store();
  const agent::PromptLibrary prompts = agent::PromptLibrary::load_default();
  install_interrupt_handler();  // scancel sends SIGTERM: the attempts in flight stop, resumable
  Station here = set_up_station(spec, store, prompts);
  int64_t shard_run = 0;
  for (const store::RunRecord& r : store.runs_of_kind("bench"))
    if (r.uuid == uuid) shard_run = r.id;
  if (shard_run == 0) shard_run = store.begin_run({"bench", spec.model, run["args"]}, uuid);
  const Ran ran = run_here(a, store, shard_run, spec, planned, here, title_of(what, spec, here),
                           spec.max_cost_usd / n,  // the run's budget, shared evenly
                           model_attempts(store, shard_run, here, prompts));
  std::cout << what << ": " << ran.finished << " of " << ran.planned << " attempt(s) finished"
            << (ran.complete() ? "" : std::string(", stopped (") + to_string(ran.stop) +
                                          "): 'mgk bench --resume' of the run submits this task again")
            << "\n";
  return exit_code_of(ran);
}

}  // namespace mgk::bench_run
