#include "bench_run/rejudge_run.h"

#include <iostream>
#include <map>
#include <set>

#include "bench_run/choose_run.h"
#include "bench_run/pooled_judge.h"
#include "bench_run/rejudge.h"
#include "bench_run/run_here.h"
#include "bench_run/station.h"
#include "common/interrupt.h"
#include "common/log.h"

namespace mgk::bench_run {

// The flags a rejudge takes: how this machine judges, and the new run's name. The attempts
// are the judged run's.
namespace {

const std::set<std::string> kRejudgeFlags = {"--rejudge", "--resume", "--compile-only", "--gpus", "--jobs",
                                             "--name",    "--new",    "--dry-run",      "--json", "--p"};

}  // namespace

ExitCode run_rejudge(const Request& a, store::Store& store, const agent::PromptLibrary& prompts, int64_t old_id,
                     int64_t continue_run) {
  const std::string old_name = "run " + std::to_string(old_id);
  for (const std::string& flag : a.typed)
    if (!kRejudgeFlags.count(flag))
      throw UsageError(flag + " is " + old_name +
                       "'s to say: a rejudge judges its attempts as they are (it takes --compile-only, --gpus, "
                       "--jobs, --name, --new, --dry-run, --json)");
  auto old = store.run(old_id);
  if (!old) throw NotFoundError("no bench run " + std::to_string(old_id) + " in " + store.path().string());
  if (old->kind != "bench")
    throw UsageError(old_name + " is " + (old->kind == "eval" ? "an " : "a ") + old->kind +
                     " run; --rejudge takes a bench run ('mgk history --runs' lists the runs)");
  const BenchSpec old_spec = BenchSpec::from_json(old->args, old_id);
  BenchSpec spec = old_spec;
  spec.rejudge_of = old_id;
  spec.compile_only = a.compile_only;
  spec.executor = "local";
  spec.jobs = a.jobs;
  spec.gpus = a.gpus;
  spec.max_cost_usd = 0;
  spec.name = a.name;
  if (continue_run) {  // --resume of a rejudge: it judges as it began, on what this session gives
    const BenchSpec began = BenchSpec::from_json(store.run(continue_run)->args, continue_run);
    if (a.was_typed("--compile-only") && !began.compile_only)
      throw UsageError("run " + std::to_string(continue_run) + " judges on GPUs; leave --compile-only out to resume it");
    spec.compile_only = began.compile_only;
    if (!a.was_typed("--jobs")) spec.jobs = began.jobs;
    if (!a.was_typed("--gpus")) spec.gpus = began.gpus;
    if (!a.was_typed("--name")) spec.name = began.name;
  }

  const std::map<AttemptKey, store::AttemptSummary> judgeable =
      judgeable_attempts(store.attempts_of_run(old_id));
  std::vector<AttemptKey> planned;  // the old plan's order, less what cannot be judged
  const std::vector<AttemptKey> old_plan = planned_attempts(old_spec.problem_list, old_spec.samples);
  for (const AttemptKey& k : old_plan)
    if (judgeable.count(k)) planned.push_back(k);
  if (planned.empty())
    throw UsageError(old_name + " has no finished attempt to judge: 'mgk bench --resume " + std::to_string(old_id) +
                     "' finishes it first");
  if (planned.size() < old_plan.size())
    log::warning(std::to_string(old_plan.size() - planned.size()) + " attempt(s) of " + old_name +
                 " are not finished and are not judged ('mgk bench --resume " + std::to_string(old_id) +
                 "' finishes them; a later rejudge then judges them)");

  int64_t run_id = continue_run;
  if (run_id == 0 && !a.new_run)
    for (const store::RunRecord& r : store.runs_of_kind("bench")) {
      BenchSpec s;
      try {
        s = BenchSpec::from_json(r.args, r.id);
      } catch (const UsageError&) {
        continue;  // written by another version
      }
      if (s.rejudge_of != old_id || s.compile_only != spec.compile_only || alive_here(r)) continue;
      run_id = r.id;
      break;
    }
  if (auto r = store.run(run_id); r) {
    if (r->status == store::Status::kDone &&
        remaining_work(planned, store.attempts_of_run(run_id), false).to_run.empty()) {
      std::cout << "run " << run_id << " judged " << old_name << "'s kernels already: 'mgk report " << old_id << " "
                << run_id << "' sets the two side by side" << (continue_run ? "" : "; give --new to judge them again")
                << "\n";
      return ExitCode::kOk;
    }
    if (alive_here(*r))
      throw UsageError("run " + std::to_string(run_id) + " is being run by process " + std::to_string(*r->pid) +
                       "; let it finish or stop it first");
    if (!continue_run)
      log::info("run " + std::to_string(run_id) + ", the rejudge of " + old_name + " begun " + r->created_at +
                ", continues (--new starts another)");
  }
  check_name_is_free(store, spec.name, run_id);
  if (a.dry_run) {
    size_t kernels = 0;
    for (const auto& k : planned) {
      std::set<std::string> distinct;
      for (const auto& e : store.evaluations_of_attempt(judgeable.at(k).id)) distinct.insert(e.kernel_hash);
      kernels += distinct.size();
    }
    std::cout << "would judge " << kernels << " kernel(s) of " << planned.size() << " attempt(s) of " << old_name
              << (spec.compile_only ? ", compiling only" : " on this machine's GPUs") << ", calling no model\n";
    return ExitCode::kOk;
  }
  Station here = set_up_station(spec, store, prompts);
  if (run_id == 0) {
    run_id = store.begin_run({"bench", spec.model, spec.to_json()});
  } else {
    nlohmann::json args = store.reopen_run(run_id).args;
    args.update(spec.to_json());
    store.set_run_args(run_id, args);
  }
  const Rejudger rejudger(
      store, run_id, judgeable,
      [&here](const std::string& problem, const std::filesystem::path& kernel, const Rejudger::Status& status) {
        return PooledJudge(here.sessions.at(problem).eval, here.pool.get(), &interrupt_flag(), status)
            .judge(kernel);
      },
      spec.compile_only, &interrupt_flag());
  const std::string title = title_of("mgk bench run " + std::to_string(run_id) + " (judging " + old_name + " again)",
                                     spec, here);
  const Ran ran = run_here(a, store, run_id, spec, planned, here, title, 0, [&rejudger](LocalExecutor&) {
    return [&rejudger](const WorkItem& item, const AttemptHooks& hooks) {
      return rejudger.run(item, hooks.status);
    };
  });
  end_run(a, store, run_id, ran.complete(), ran.stop);
  if (!a.json) std::cout << "side by side with the run judged: mgk report " << old_id << " " << run_id << "\n";
  return exit_code_of(ran);
}

}  // namespace mgk::bench_run
