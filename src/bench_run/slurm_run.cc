#include "bench_run/slurm_run.h"

#include <iostream>

#include "bench_run/slurm_executor.h"
#include "bench_run/station.h"
#include "bench_run/work_list.h"
#include "common/env.h"
#include "common/error.h"
#include "common/file.h"
#include "common/format.h"
#include "common/interrupt.h"
#include "common/log.h"
#include "llm/config.h"
#include "llm/provider.h"
#include "report/table.h"

namespace mgk::bench_run {
namespace {

// Records a submitted job in the run's args, where --status and --resume find it.
void record_job(store::Store& store, SlurmRun& r, const std::string& job) {
  r.slurm.jobs.push_back(job);
  r.args["slurm"] = r.slurm.to_json();
  store.set_run_args(r.id, r.args);
}

std::vector<bench_run::TaskStatus> statuses_of(const SlurmRun& r, bool retry_failed) {
  return bench_run::task_statuses(r.spec, r.uuid, r.slurm.tasks, r.folder, bench_run::scheduler_states(r.slurm.jobs),
                              retry_failed);
}

std::string title_of(const bench_run::BenchSpec& s) {
  return s.model + ", " + s.mode + ", " + std::to_string(s.problem_list.size()) + " problem(s) x " +
         std::to_string(s.samples) + " sample(s)" + (s.compile_only ? ", compile only" : "");
}

}  // namespace

bool SlurmRun::is_slurm(const store::RunRecord& run) {
  return run.kind == "bench" && run.args.is_object() && run.args.value("executor", "") == "slurm";
}

SlurmRun SlurmRun::load(store::Store& store, int64_t run_id) {
  auto run = store.run(run_id);
  if (!run || run->kind != "bench") throw UsageError("no bench run " + std::to_string(run_id) + " in " + store.path().string());
  if (!is_slurm(*run))
    throw UsageError("run " + std::to_string(run_id) + " ran here, not on Slurm: 'mgk report " +
                     std::to_string(run_id) + "' shows it");
  SlurmRun r;
  r.id = run->id;
  r.uuid = run->uuid;
  r.args = run->args;
  r.spec = bench_run::BenchSpec::from_json(run->args, run->id);
  r.slurm = bench_run::SlurmOptions::from_json(run->args.value("slurm", nlohmann::json::object()), run->id);
  r.folder = bench_run::RunFolder::of(store.path(), run->uuid);
  return r;
}

nlohmann::json run_file_json(const SlurmRun& r) {
  return {{"run", r.id}, {"uuid", r.uuid}, {"model", r.spec.model}, {"args", r.args}};
}

std::string script_for(const bench_run::SlurmOptions& slurm, const bench_run::RunFolder& folder, int64_t run_id,
                       const bench_run::BenchSpec& spec, const std::string& api_key_env) {
  return bench_run::array_script(slurm, folder, {run_id, title_of(spec), self_dir() / "mgk", root_dir(), api_key_env});
}

void submit_new_run(store::Store& store, int64_t run_id, const std::string& api_key_env) {
  SlurmRun r = SlurmRun::load(store, run_id);
  std::filesystem::create_directories(r.folder.dir);
  write_file_atomically(r.folder.run_file(), run_file_json(r).dump(2) + "\n");
  write_file_atomically(r.folder.script(), script_for(r.slurm, r.folder, r.id, r.spec, api_key_env));
  const std::string id = std::to_string(run_id);
  const std::string stored = "run " + id + " is stored: 'mgk bench --resume " + id +
                             "' or the same command submits it once sbatch takes it";
  std::string job;
  try {
    job = bench_run::submit_array(r.folder, bench_run::every_task(r.slurm), r.slurm.array_parallelism, {}, {});
  } catch (const Interrupted&) {
    log::info(stored);
    throw;
  } catch (const Error& e) {
    throw Error(std::string(e.what()) + " (" + stored + ")", e.code());
  }
  record_job(store, r, job);
  std::cout << "run " << id << " (" << title_of(r.spec) << ") submitted to Slurm as job " << job << ": "
            << r.slurm.tasks << " array task(s), each with its shard of the attempts\n"
            << "script " << r.folder.script().string() << "; each task's store and log: "
            << (r.folder.dir / "task-K.{db,log}").string() << "\n"
            << "'mgk bench --status " << id << "' follows it, 'mgk bench --resume " << id
            << "' submits failed tasks again, 'mgk bench --merge " << id << "' gathers the shards into "
            << store.path().string() << " (then 'mgk report " << id << "')\n";
}

void resubmit_failed(store::Store& store, int64_t run_id, bool retry_failed, const std::vector<std::string>& sbatch_args) {
  SlurmRun r = SlurmRun::load(store, run_id);
  const auto statuses = statuses_of(r, retry_failed);
  std::vector<int> failed;
  int queued = 0;
  for (const auto& t : statuses) {
    if (t.state == bench_run::TaskStatus::State::kFailed) failed.push_back(t.task);
    queued += t.state == bench_run::TaskStatus::State::kPending || t.state == bench_run::TaskStatus::State::kRunning;
  }
  const std::string id = std::to_string(run_id);
  if (failed.empty()) {
    if (queued > 0)
      std::cout << "run " << id << ": nothing to submit again, " << queued
                << " task(s) still queued or running ('mgk bench --status " << id << "')\n";
    else
      std::cout << "run " << id << ": every task is done: 'mgk bench --merge " << id << "' gathers the shards\n";
    return;
  }
  const std::vector<std::string> script_args =
      retry_failed ? std::vector<std::string>{"--retry-failed"} : std::vector<std::string>{};
  const std::string job = bench_run::submit_array(r.folder, failed, r.slurm.array_parallelism, sbatch_args, script_args);
  record_job(store, r, job);
  if (store.run(run_id)->status != store::Status::kRunning) store.reopen_run(run_id);
  std::cout << "run " << id << ": task(s) " << bench_run::array_spec(failed, 0) << " submitted again as job " << job << "; "
            << queued << " other(s) still queued or running\n";
}

void print_status(store::Store& store, int64_t run_id, bool json) {
  SlurmRun r = SlurmRun::load(store, run_id);
  const auto statuses = statuses_of(r, false);
  int finished = 0, planned = 0;
  std::map<bench_run::TaskStatus::State, int> by_state;
  for (const auto& t : statuses) finished += t.finished, planned += t.planned, ++by_state[t.state];
  const std::string id = std::to_string(run_id);
  if (json) {
    nlohmann::json tasks = nlohmann::json::array();
    for (const auto& t : statuses)
      tasks.push_back({{"task", t.task}, {"state", bench_run::to_string(t.state)}, {"finished", t.finished},
                       {"planned", t.planned}, {"slurm_state", t.scheduler}, {"log", t.log.string()}});
    std::cout << nlohmann::json{{"run", run_id}, {"jobs", r.slurm.jobs}, {"finished", finished},
                                {"planned", planned}, {"tasks", tasks}}
                     .dump()
              << std::endl;
    return;
  }
  std::cout << "run " << id << " on Slurm (job " << join(r.slurm.jobs) << "): " << finished << " of " << planned
            << " attempts finished in the shards\n";
  report::Table table({"task", "state", "attempts", "slurm", "log"}, {true, false, true, false, false});
  for (const auto& t : statuses)
    table.add({std::to_string(t.task), bench_run::to_string(t.state),
               std::to_string(t.finished) + "/" + std::to_string(t.planned), t.scheduler.empty() ? "-" : t.scheduler,
               t.log.string()});
  std::cout << table.text();
  std::string counts;
  for (auto s : {bench_run::TaskStatus::State::kDone, bench_run::TaskStatus::State::kRunning,
                 bench_run::TaskStatus::State::kPending, bench_run::TaskStatus::State::kFailed})
    counts += (counts.empty() ? "" : ", ") + std::to_string(by_state[s]) + " " + bench_run::to_string(s);
  std::cout << counts << "\n";
  if (by_state[bench_run::TaskStatus::State::kFailed] > 0)
    std::cout << "'mgk bench --resume " << id << "' submits the failed task(s) again (their logs above say why)\n";
  else if (by_state[bench_run::TaskStatus::State::kDone] == int(statuses.size()))
    std::cout << "every task is done: 'mgk bench --merge " << id << "' gathers the shards\n";
}

bool merge_shards(store::Store& store, int64_t run_id) {
  SlurmRun r = SlurmRun::load(store, run_id);
  for (int k = 0; k < r.slurm.tasks; ++k) {
    if (!std::filesystem::exists(r.folder.shard(k))) continue;
    const store::MergeReport m = store.merge_from(r.folder.shard(k));
    std::cout << "merged " << r.folder.shard(k).string() << ": " << m.attempts << " new attempt(s), " << m.turns
              << " new turn(s)\n";
  }
  const auto planned = bench_run::planned_attempts(r.spec.problem_list, r.spec.samples);
  return bench_run::remaining_work(planned, store.attempts_of_run(run_id), false).to_run.empty();
}

ExitCode run_on_slurm(const Request& a, store::Store& store, const Choice& choice,
                      const agent::PromptLibrary& prompts) {
  const BenchSpec& spec = choice.spec;
  const int attempts = int(spec.problem_list.size()) * spec.samples;
  SlurmOptions slurm = a.slurm;
  slurm.tasks = slurm.tasks > 0 ? std::min(slurm.tasks, attempts) : attempts;
  if (choice.run_id != 0) {
    const std::string id = std::to_string(choice.run_id);
    if (a.dry_run) throw UsageError("--dry-run shows a new run; 'mgk bench --status " + id + "' shows run " + id);
    const SlurmRun stored = SlurmRun::load(store, choice.run_id);
    for (const auto& [flag, same] : {std::pair{"--array-tasks", slurm.tasks == stored.slurm.tasks},
                                     {"--array-parallelism", slurm.array_parallelism == stored.slurm.array_parallelism},
                                     {"--jobs", a.jobs == stored.spec.jobs},
                                     {"--max-cost", a.max_cost == stored.spec.max_cost_usd}})
      if (a.was_typed(flag) && !same)
        throw UsageError(std::string(flag) + " was fixed when run " + id + " was submitted; leave it out to resume it");
    std::vector<std::string> sbatch;  // given now, they override the script's for the tasks submitted again
    if (a.was_typed("--partition")) sbatch.push_back("--partition=" + a.slurm.partition);
    if (a.was_typed("--time")) sbatch.push_back("--time=" + a.slurm.time);
    if (a.was_typed("--gpus-per-task")) sbatch.push_back("--gpus-per-task=" + std::to_string(a.slurm.gpus_per_task));
    sbatch.insert(sbatch.end(), a.slurm.sbatch_args.begin(), a.slurm.sbatch_args.end());
    resubmit_failed(store, choice.run_id, a.retry_failed, sbatch);
    return ExitCode::kOk;
  }
  if (!a.gpus.empty())
    throw UsageError("--gpus names this machine's GPUs; with --executor slurm each task evaluates on the GPUs of "
                     "its allocation (--gpus-per-task N)");
  if (!spec.compile_only && a.slurm.gpus_per_task == 0)
    log::warning("no --gpus-per-task: each task gets only the GPUs its partition gives unasked (on most clusters none)");
  const llm::Config llm_config = llm::load_config();
  const llm::Endpoint& endpoint = llm_config.endpoint(spec.model.substr(0, spec.model.find(':')));
  const std::string key_env = endpoint.api_key_required ? endpoint.api_key_env : "";
  if (a.dry_run) {
    print_dry_run(spec, store, prompts);
    std::cout << "\nthe job-array script (not submitted; run 0 stands for the run's id; sbatch --array="
              << array_spec(every_task(slurm), slurm.array_parallelism) << "):\n"
              << script_for(slurm, RunFolder::of(store.path(), "RUN-UUID"), 0, spec, key_env);
    return ExitCode::kOk;
  }
  // A missing key or price stops here, before anything is submitted.
  check_cost_limits(*llm::make_provider(spec.model, llm_config), spec);
  nlohmann::json args = spec.to_json();
  args["slurm"] = slurm.to_json();
  submit_new_run(store, store.begin_run({"bench", spec.model, args}), key_env);
  return ExitCode::kOk;
}

}  // namespace mgk::bench_run
