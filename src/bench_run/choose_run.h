// Which run a `mgk bench` continues or begins: --resume RUN, else the unfinished run with the
// same arguments (offered on a terminal, taken otherwise), else a new one. A resume keeps the
// run's attempts and may change only its limits (BenchSpec's second half).
#pragma once
#include <cstdint>
#include <string>

#include "bench_run/bench_spec.h"
#include "bench_run/request.h"
#include "store/store.h"

namespace mgk::bench_run {

struct Choice {
  BenchSpec spec;
  int64_t run_id = 0;        // 0: a new run
  int64_t complete_run = 0;  // a finished run with the same arguments: nothing to do
  std::string changed;       // the limits a resume changed, said once its checks pass
};

// UsageError on flags that contradict the run they resume, or a new run's bad values.
Choice choose_run(const Request& r, store::Store& store, const std::string& prompt_version);

// A run's name is how `mgk report NAME` finds it: one bench run per name (`run`: the run that
// takes it, 0 for a new one). UsageError when the name is taken or is a number.
void check_name_is_free(store::Store& store, const std::string& name, int64_t run);

// The run is marked running by another process of this machine that still lives.
bool alive_here(const store::RunRecord& r);

}  // namespace mgk::bench_run
