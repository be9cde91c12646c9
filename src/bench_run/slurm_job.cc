#include "bench_run/slurm_job.h"

#include "common/error.h"

namespace mgk::bench_run {

nlohmann::json SlurmOptions::to_json() const {
  return {{"tasks", tasks},         {"partition", partition},
          {"gpus_per_task", gpus_per_task}, {"time", time},
          {"array_parallelism", array_parallelism}, {"sbatch_args", sbatch_args},
          {"jobs", jobs}};
}

SlurmOptions SlurmOptions::from_json(const nlohmann::json& j, int64_t run_id) {
  SlurmOptions o;
  try {
    o.tasks = j.at("tasks").get<int>();
    o.partition = j.at("partition").get<std::string>();
    o.gpus_per_task = j.at("gpus_per_task").get<int>();
    o.time = j.at("time").get<std::string>();
    o.array_parallelism = j.at("array_parallelism").get<int>();
    o.sbatch_args = j.at("sbatch_args").get<std::vector<std::string>>();
    o.jobs = j.at("jobs").get<std::vector<std::string>>();
  } catch (const nlohmann::json::exception& e) {
    throw UsageError("run " + std::to_string(run_id) + " has no Slurm job this version of mgk can read (" +
                     e.what() + ")");
  }
  return o;
}

RunFolder RunFolder::of(const std::filesystem::path& store, const std::string& run_uuid) {
  return {std::filesystem::absolute(store).parent_path() / "slurm" / run_uuid};
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string array_spec(const std::vector<int>& tasks, int parallelism) {
  std::string spec;
  for (size_t i = 0; i < tasks.size();) {
    size_t j = i;
    while (j + 1 < tasks.size() && tasks[j + 1] == tasks[j] + 1) ++j;
    spec += (spec.empty() ? "" : ",") + std::to_string(tasks[i]);
    if (j > i) spec += "-" + std::to_string(tasks[j]);
    i = j + 1;
  }
  if (parallelism > 0) spec += "%" + std::to_string(parallelism);
  return spec;
}

std::vector<int> every_task(const SlurmOptions& options) {
  std::vector<int> tasks;
  for (int k = 0; k < options.tasks; ++k) tasks.push_back(k);
  return tasks;
}

std::string array_script(const SlurmOptions& o, const RunFolder& f, const ScriptInputs& in) {
  const std::string run = std::to_string(in.run_id), n = std::to_string(o.tasks);
  std::string s = "#!/bin/bash\n";
  s += "# mgk bench run " + run + " (" + in.title + ") as a Slurm job array of " + n + " task(s).\n";
  s += "# Task K runs shard K of the attempts into its own store, task-K.db, beside task-K.log.\n";
  s += "# Written and submitted by mgk (sbatch --array); 'mgk bench --status " + run +
       "' follows it, 'mgk bench --merge " + run + "' gathers it.\n";
  s += "#SBATCH --job-name=mgk-bench-" + run + "\n";
  s += "#SBATCH --chdir=" + f.dir.string() + "\n";
  s += "#SBATCH --output=" + (f.dir / "task-%a.log").string() + "\n";
  s += "#SBATCH --open-mode=append\n";
  s += "#SBATCH --export=ALL\n";  // the submitting environment, API key included, at run time
  s += "#SBATCH --ntasks=1\n";
  if (!o.partition.empty()) s += "#SBATCH --partition=" + o.partition + "\n";
  if (!o.time.empty()) s += "#SBATCH --time=" + o.time + "\n";
  if (o.gpus_per_task > 0) s += "#SBATCH --gpus-per-task=" + std::to_string(o.gpus_per_task) + "\n";
  for (const std::string& a : o.sbatch_args) s += "#SBATCH " + a + "\n";
  s += "set -euo pipefail\n";
  s += "task=\"${SLURM_ARRAY_TASK_ID:?submit this script with sbatch --array}\"\n";
  s += "run_dir=" + shell_quote(f.dir.string()) + "\n";
  if (!in.api_key_env.empty())
    s += ": \"${" + in.api_key_env + ":?is not set: export it where you run mgk bench, sbatch passes it on}\"\n";
  s += "# The compile cache and the sandboxes on the node's own disk, one per task.\n";
  s += "export MGK_HOME=\"${SLURM_TMPDIR:-${TMPDIR:-/tmp}}/mgk-${SLURM_JOB_ID}\"\n";
  s += "trap 'rm -rf \"$MGK_HOME\"' EXIT\n";
  s += "export MGK_ROOT=" + shell_quote(in.root.string()) + "\n";
  s += "echo \"mgk: task $task/" + n + " of job ${SLURM_ARRAY_JOB_ID} on $(hostname) at $(date -u +%FT%TZ), "
       "GPUs ${CUDA_VISIBLE_DEVICES:-none}\"\n";
  s += shell_quote(in.mgk.string()) + " --db \"$run_dir/task-$task.db\" bench --shard \"$task/" + n +
       "\" --run-file \"$run_dir/run.json\" \"$@\"\n";
  return s;
}

}  // namespace mgk::bench_run
