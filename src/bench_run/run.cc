#include "bench_run/run.h"

#include <iostream>
#include <string>
#include <vector>

#include "bench_run/array_task.h"
#include "bench_run/choose_run.h"
#include "bench_run/rejudge_run.h"
#include "bench_run/run_here.h"
#include "bench_run/slurm_run.h"
#include "bench_run/station.h"
#include "common/interrupt.h"
#include "common/log.h"

namespace mgk::bench_run {
namespace {

// The options only --executor slurm takes.
const std::vector<std::string> kSlurmFlags = {"--array-tasks", "--partition", "--gpus-per-task",
                                              "--time",        "--array-parallelism", "--sbatch-arg"};

}  // namespace

ExitCode run(const Request& a, const Stores& stores) {
  if (!a.shard.empty() || !a.run_file.empty()) return run_array_task(a, stores.open);
  if (a.status > 0) {
    store::Store store = stores.open_to_read();
    print_status(store, a.status, a.json);
    return ExitCode::kOk;
  }
  if (a.merge > 0) {
    store::Store store = stores.open();
    if (merge_shards(store, a.merge)) {
      end_run(a, store, a.merge, true, StopReason::kFinished);
      return ExitCode::kOk;
    }
    const std::string id = std::to_string(a.merge);
    std::cout << "run " << id << " is not complete yet: 'mgk bench --status " << id << "' says what is left; merge "
              << "again when it is (merging twice adds only what is new)\n";
    return ExitCode::kOk;
  }
  store::Store store = stores.open();
  const agent::PromptLibrary prompts = agent::PromptLibrary::load_default();
  install_interrupt_handler();
  if (a.rejudge > 0) return run_rejudge(a, store, prompts, a.rejudge, 0);
  if (auto r = store.run(a.resume); a.resume > 0 && r && r->kind == "bench")
    if (const int64_t of = r->args.value("rejudge_of", int64_t(0)); of > 0)
      return run_rejudge(a, store, prompts, of, a.resume);
  Choice choice = choose_run(a, store, prompts.version());
  const BenchSpec& spec = choice.spec;
  check_name_is_free(store, spec.name, choice.run_id ? choice.run_id : choice.complete_run);
  if (choice.complete_run && !a.dry_run) {
    const std::string id = std::to_string(choice.complete_run);
    if (auto run = store.run(choice.complete_run); run && run->name() != spec.name) {  // renamed
      nlohmann::json args = run->args;
      args["name"] = spec.name;
      store.set_run_args(run->id, args);
      log::info("run " + id + " is now named '" + spec.name + "'");
    }
    int failed = 0;
    for (const auto& at : store.attempts_of_run(choice.complete_run)) failed += at.status == store::Status::kFailed;
    std::cout << "run " << id << (a.resume ? " is complete, nothing to resume" : " with these arguments is complete")
              << ": 'mgk report " << id << "' shows it" << (a.resume ? "" : "; give --new to run it again")
              << (failed ? "; --retry-failed runs its " + std::to_string(failed) +
                               " attempt(s) cut short by the provider or the evaluator again"
                         : std::string())
              << "\n";
    return ExitCode::kOk;
  }
  if (spec.executor == "slurm") {
    if (!choice.changed.empty()) log::info(choice.changed);
    return run_on_slurm(a, store, choice, prompts);
  }
  for (const std::string& flag : kSlurmFlags)
    if (a.was_typed(flag)) throw UsageError(flag + " is for --executor slurm");
  if (a.dry_run) {
    print_dry_run(spec, store, prompts);
    return ExitCode::kOk;
  }
  Station here = set_up_station(spec, store, prompts);
  if (!choice.changed.empty()) log::info(choice.changed);
  int64_t run_id = choice.run_id;
  if (run_id == 0) run_id = store.begin_run({"bench", spec.model, spec.to_json()});
  else {
    nlohmann::json args = store.reopen_run(run_id).args;
    args.update(spec.to_json());  // the limits this resume took, for the next one
    store.set_run_args(run_id, args);
  }
  const Ran ran = run_here(a, store, run_id, spec, planned_attempts(spec.problem_list, spec.samples), here,
                           title_of("mgk bench run " + std::to_string(run_id), spec, here), spec.max_cost_usd,
                           model_attempts(store, run_id, here, prompts));
  end_run(a, store, run_id, ran.complete(), ran.stop);
  return exit_code_of(ran);
}

}  // namespace mgk::bench_run
