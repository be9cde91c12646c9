// The attempts of a plan that the store does not hold finished, run on this machine with the
// progress display (the local executor: a local run, each Slurm array task and a rejudge
// alike), and the run's end: its state and summary stored, its report printed.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "bench_run/attempt_runner.h"
#include "bench_run/bench_spec.h"
#include "bench_run/local_executor.h"
#include "bench_run/request.h"
#include "bench_run/station.h"
#include "bench_run/work_list.h"
#include "common/error.h"
#include "store/store.h"

namespace mgk::bench_run {

struct Ran {
  StopReason stop = StopReason::kFinished;
  size_t finished = 0, planned = 0;  // attempts of the plan finished, now
  bool complete() const { return finished == planned; }
};

// Runs one work item to its end; returns its stored attempt.
using RunAttempt = std::function<int64_t(const WorkItem&, const AttemptHooks&)>;
// The run's RunAttempt, made once the executor (its stop flag, its budget) exists.
using MakeRunAttempt = std::function<RunAttempt(LocalExecutor&)>;

// The model's attempts: agent sessions over the station's sessions (which it takes).
MakeRunAttempt model_attempts(store::Store& store, int64_t run_id, Station& station,
                              const agent::PromptLibrary& prompts);

// Runs `planned`'s unfinished attempts into run `run_id`. `max_cost`: the budget of this run
// (or task), earlier sessions included.
Ran run_here(const Request& r, store::Store& store, int64_t run_id, const BenchSpec& spec,
             const std::vector<AttemptKey>& planned, Station& station, const std::string& title, double max_cost,
             const MakeRunAttempt& make_run_attempt);

// kOk when complete; else what stopped it (the budget, errors, an interrupt).
ExitCode exit_code_of(const Ran& ran);

// The run's end: done when complete, else interrupted; its summary stored and its report
// printed (with --json, one line).
void end_run(const Request& r, store::Store& store, int64_t run_id, bool complete, StopReason stop);

}  // namespace mgk::bench_run
