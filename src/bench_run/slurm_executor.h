// Runs a bench's shards as a Slurm job array: submits array tasks with sbatch, and tells
// each task's state from two sources: its shard (what it finished, by the same rule as
// every executor: work_list.h) and the scheduler (squeue; sacct where accounting is on)
// for what is queued or running. A task is done when its shard holds its attempts
// finished; otherwise pending or running as Slurm says, else failed (cancelled, timed out,
// crashed, or stopped by its budget), which is what a resume submits again.
#pragma once
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "bench_run/bench_spec.h"
#include "bench_run/slurm_job.h"

namespace mgk::bench_run {

struct TaskStatus {
  enum class State { kDone, kPending, kRunning, kFailed };
  int task = 0;
  State state = State::kFailed;
  int finished = 0, planned = 0;  // attempts of its shard
  std::string scheduler;          // Slurm's state of its newest job (RUNNING, CANCELLED, ...); "" unknown
  std::filesystem::path log;
};
const char* to_string(TaskStatus::State s);

// Slurm's state per array task, of the newest job (of `jobs`, oldest first) that ran it: from
// squeue's lines "JOB|TASK|STATE" first, then sacct's "JOB_TASK|STATE ..." (jobs squeue has
// forgotten). Lines of other jobs, of whole arrays ("12_[3-5]") or not understood are skipped.
std::map<int, std::string> parse_scheduler_states(const std::vector<std::string>& jobs, const std::string& squeue,
                                                  const std::string& sacct);

// Asks squeue (and sacct, when it answers) about `jobs`. Error when squeue fails for another
// reason than not knowing them.
std::map<int, std::string> scheduler_states(const std::vector<std::string>& jobs);

// Each task's status from its shard in `folder` (missing: nothing finished) and `scheduler`.
std::vector<TaskStatus> task_statuses(const BenchSpec& spec, const std::string& run_uuid, int tasks,
                                      const RunFolder& folder, const std::map<int, std::string>& scheduler,
                                      bool retry_failed);

// sbatch --parsable --array=SPEC [sbatch_args] SCRIPT [script_args]; returns the job id.
// Error with sbatch's words when it refuses.
std::string submit_array(const RunFolder& folder, const std::vector<int>& tasks, int parallelism,
                         const std::vector<std::string>& sbatch_args, const std::vector<std::string>& script_args);

}  // namespace mgk::bench_run
