// `mgk bench --rejudge RUN` from start to end: which attempts of RUN can be judged, the run
// that judges them (new, or the unfinished rejudge of RUN a killed one left), the judging on
// this machine (bench/rejudge.h) and the run's end. No model is called.
#pragma once
#include <cstdint>

#include "agent/prompt_library.h"
#include "bench_run/request.h"
#include "common/error.h"
#include "store/store.h"

namespace mgk::bench_run {

// `--rejudge RUN` (or `--resume` of a rejudge): run RUN's finished attempts judged again here
// (bench/rejudge.h), into a new run, or into the unfinished rejudge of RUN a killed one left.
// `continue_run`: the rejudge a --resume names, 0 otherwise.
ExitCode run_rejudge(const Request& r, store::Store& store, const agent::PromptLibrary& prompts, int64_t old_id,
                     int64_t continue_run);

}  // namespace mgk::bench_run
