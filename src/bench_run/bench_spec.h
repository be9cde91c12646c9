// A benchmark run as the user asked for it: which attempts it is made of (model, problems,
// samples, mode, turns, ...) and how this machine runs them (jobs, GPUs, budget). Stored as
// the run's args, so that `--resume RUN` continues it and a re-run with the same arguments
// finds it. Shared by every executor: this process's threads, or a Slurm job array whose
// tasks each run a shard of the attempts (bench/slurm_job.h).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/config.h"
#include "problems/spec.h"

namespace mgk::bench_run {

struct BenchSpec {
  // ---- what the attempts are: two runs that agree on these are the same benchmark ----
  std::string model;                  // provider:model
  std::string problems = "*";         // the names and globs the user gave, comma-joined
  std::vector<std::string> problem_list;  // what it matched when the run began, sorted
  int samples = 1;                    // attempts per problem (the n of pass@k)
  std::string mode = "refine";        // refine | shell
  int turns = agent::kRefineTurns;    // per attempt (shell: steps)
  int world = 2;                      // ranks, clamped to each problem's range
  bool compile_only = false;          // the judge only compiles (no GPU needed)
  std::optional<double> temperature;
  std::optional<std::string> reasoning_effort;
  std::string prompt_version;         // prompts/VERSION when the run began
  // Where the attempts run: "local" (this process) or "slurm" (a job array). Part of the
  // identity so that a local run never continues a Slurm run's attempts, nor the reverse.
  std::string executor = "local";
  // A run that judges another run's kernels again (`--rejudge RUN`, bench/rejudge.h): that
  // run's id; 0 for a run of the model. Part of the identity: no run of the model ever
  // continues a rejudge, nor the reverse.
  int64_t rejudge_of = 0;

  // ---- the limits of the calls still to come: a resume may change them (the attempts
  // stay the same benchmark; what finished keeps the limits it ran under) ----
  double attempt_max_cost_usd = agent::Limits{}.max_cost_usd;  // per attempt; 0: none
  int max_tokens = agent::Sampling{}.max_tokens;
  double command_timeout_s = agent::kCommandTimeoutS;  // shell mode

  // ---- a label, not part of what the attempts are: `--name`, which `mgk report NAME` and the
  // reports' titles use; a resume may change it ----
  std::string name;

  // ---- how this machine runs them: may change from one session of the run to the next ----
  int jobs = 4;              // attempts in flight at once (Slurm: in each array task)
  std::vector<int> gpus;     // the GPUs evaluations may use (empty: every visible one)
  double max_cost_usd = 0;   // the whole run, resumed sessions included; 0: none

  nlohmann::json to_json() const;
  // Reads what to_json wrote; UsageError naming the run when a field is missing or bad.
  static BenchSpec from_json(const nlohmann::json& args, int64_t run_id);
  // The fields that define the attempts, for finding a run to continue.
  nlohmann::json identity() const;
};

// The problems `text` names (common/name_patterns.h: names and globs, comma-separated),
// sorted, each once; UsageError naming a pattern that matches none and listing the suite.
std::vector<std::string> expand_problems(const std::string& text);

// The rank count a problem runs at: the requested one, raised or lowered into the problem's
// [min_world, max_world].
int world_for(const problems::Spec& spec, int requested);

}  // namespace mgk::bench_run
