// A bench run as a Slurm job array: the options the user gave, the folder the run owns
// beside the store (the script, the run's description, one store shard and one log per
// array task) and the script itself. Each array task runs
//   mgk --db DIR/task-K.db bench --shard K/N --run-file DIR/run.json
// on its node: shard K of the plan (work_list.h) with the local executor, into its own
// store, which `mgk merge` (or `mgk bench --merge RUN`) folds into the main one.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace mgk::bench_run {

// What `mgk bench --executor slurm` was given; stored in the run's args under "slurm",
// with the ids of the jobs submitted for it.
struct SlurmOptions {
  int tasks = 0;              // array tasks, i.e. shards; 0: one per attempt
  std::string partition;      // "": the cluster's default
  int gpus_per_task = 0;      // 0: no GPU asked for (--compile-only)
  std::string time;           // a task's time limit, as sbatch takes it ("2:00:00"); "": the default
  int array_parallelism = 0;  // array tasks running at once; 0: no cap
  std::vector<std::string> sbatch_args;  // more #SBATCH lines, e.g. "--account=lab"
  std::vector<std::string> jobs;          // the job ids submitted, oldest first

  nlohmann::json to_json() const;
  // UsageError naming the run when a field is missing or bad.
  static SlurmOptions from_json(const nlohmann::json& j, int64_t run_id);
};

// The folder of one Slurm run: <store's folder>/slurm/<run uuid>/ (on a cluster, a filesystem
// the nodes share, as the home directory usually is).
struct RunFolder {
  std::filesystem::path dir;
  static RunFolder of(const std::filesystem::path& store, const std::string& run_uuid);
  std::filesystem::path script() const { return dir / "job.sbatch"; }
  std::filesystem::path run_file() const { return dir / "run.json"; }  // what the tasks read
  std::filesystem::path shard(int task) const { return dir / ("task-" + std::to_string(task) + ".db"); }
  std::filesystem::path log(int task) const { return dir / ("task-" + std::to_string(task) + ".log"); }
};

// What the script says beyond the options.
struct ScriptInputs {
  int64_t run_id = 0;
  std::string title;                 // "openai:gpt-4o, refine, 8 problem(s) x 2 sample(s)"
  std::filesystem::path mgk, root;   // the mgk binary, the suite (MGK_ROOT)
  std::string api_key_env;           // the variable the model's key is read from; "" none
};

// The job-array script: #SBATCH lines from the options (output per task, appended to on a
// resubmission), the allocation's task id as the shard, a node-local MGK_HOME (compile
// cache and sandboxes, removed at the end), and the key checked by name only: its value
// comes with the environment sbatch passes on (--export=ALL), never in the file. Arguments
// given to the script (`--retry-failed`) go to each task's mgk.
std::string array_script(const SlurmOptions& options, const RunFolder& folder, const ScriptInputs& in);

// sbatch's --array value: "0-5", "1,4,7", with "%K" for a cap on tasks at once.
std::string array_spec(const std::vector<int>& tasks, int parallelism);
// Every task of the array: 0, 1, ..., options.tasks - 1.
std::vector<int> every_task(const SlurmOptions& options);

// `s` as one word for the shell ('...' with embedded quotes escaped).
std::string shell_quote(const std::string& s);

}  // namespace mgk::bench_run
