// What `mgk bench` was asked, as values: the flags, and which of them were typed (a resume
// takes only the typed ones; a rejudge refuses the ones that are the judged run's to say).
// The command line fills it (cli/cmd_bench.cc); bench/run.h carries it out.
#pragma once
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "agent/config.h"
#include "bench_run/slurm_job.h"

namespace mgk::bench_run {

// Defaults of what each attempt may do are the agent's (agent/config.h); turns 0: the
// mode's default.
struct Request {
  std::vector<std::string> problems;  // names and globs, each value a comma list (common/name_patterns.h)
  std::string problems_file;
  std::string model, mode = "refine", reasoning_effort, executor = "local", name;
  std::vector<int> gpus;  // --gpus, parsed
  int samples = 1, turns = 0, world = 2, jobs = 4, max_tokens = agent::Sampling{}.max_tokens;
  double max_cost = 0, attempt_max_cost = agent::Limits{}.max_cost_usd, temperature = 0,
         command_timeout = agent::kCommandTimeoutS;
  bool temperature_given = false, compile_only = false, dry_run = false, json = false, new_run = false,
       retry_failed = false;
  int64_t resume = 0, status = 0, merge = 0, rejudge = 0;
  std::vector<double> ps;             // --p: extra fast_p thresholds of the report
  SlurmOptions slurm;                 // --executor slurm
  std::string shard, run_file;        // an array task: --shard K/N --run-file DIR/run.json

  std::set<std::string> typed;        // the flags given, by long name ("--samples")
  bool may_ask = false;               // a terminal both ways: an unfinished run is offered, not taken

  bool was_typed(const std::string& flag) const { return typed.count(flag) > 0; }
};

}  // namespace mgk::bench_run
