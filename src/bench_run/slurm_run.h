// `mgk bench --executor slurm` on the machine that submits: a run handed to Slurm as a job
// array (bench/slurm_job.h), its progress (--status), its failed tasks submitted again
// (--resume), and its shards gathered into the store (--merge). What each array task runs
// on its node is bench/array_task.h: the local executor over its shard.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "agent/prompt_library.h"
#include "bench_run/bench_spec.h"
#include "bench_run/choose_run.h"
#include "bench_run/request.h"
#include "bench_run/slurm_job.h"
#include "common/error.h"
#include "store/store.h"

namespace mgk::bench_run {

// A bench run submitted to Slurm, as its stored args describe it.
struct SlurmRun {
  int64_t id = 0;
  std::string uuid;
  nlohmann::json args;  // the run's args: the spec, and "slurm"
  bench_run::BenchSpec spec;
  bench_run::SlurmOptions slurm;
  bench_run::RunFolder folder;

  // UsageError when the run is not a bench run given to Slurm.
  static SlurmRun load(store::Store& store, int64_t run_id);
  // Whether a stored run was given to Slurm.
  static bool is_slurm(const store::RunRecord& run);
};

// The description every array task reads (--run-file): the run's id, uuid, model and args.
nlohmann::json run_file_json(const SlurmRun& r);

// For a run just begun in the store (its args with "slurm"): writes its folder (run.json, the
// script) and submits every task; records the job id; prints what it did and what is next.
void submit_new_run(store::Store& store, int64_t run_id, const std::string& api_key_env);

// The tasks that failed (neither done, nor queued or running) submitted again; `sbatch_args`
// (options given now, as --time=4:00:00) override the script's for them.
void resubmit_failed(store::Store& store, int64_t run_id, bool retry_failed, const std::vector<std::string>& sbatch_args);

// Each task's state, attempts finished and log; one JSON object with `json`.
void print_status(store::Store& store, int64_t run_id, bool json);

// Merges every shard written so far into `store` (again after they grew: the same result);
// true when the run's plan is then complete there.
bool merge_shards(store::Store& store, int64_t run_id);

// The job-array script a run with these options would get (--dry-run shows it).
std::string script_for(const bench_run::SlurmOptions& slurm, const bench_run::RunFolder& folder, int64_t run_id,
                       const bench_run::BenchSpec& spec, const std::string& api_key_env);

// A new run given to Slurm: written out and submitted (with --dry-run, the script shown);
// a run submitted before: its failed tasks submitted again.
ExitCode run_on_slurm(const Request& r, store::Store& store, const Choice& choice,
                      const agent::PromptLibrary& prompts);

}  // namespace mgk::bench_run
