// `mgk bench`, whichever form it takes: a run chosen (bench/choose_run.h), resumed or begun,
// its machine prepared (bench/station.h), its attempts executed here (bench/run_here.h) or
// handed to Slurm (bench/slurm_run.h), and ended with its report; an array task's shard
// (bench/array_task.h); a rejudge (bench/rejudge_run.h); a Slurm run's --status and --merge.
// Attempts run concurrently (--jobs), evaluations on disjoint GPU groups; every turn is stored
// as it completes, so a run killed at any moment continues with --resume (or by running the
// same command again) and loses nothing finished.
#pragma once
#include <functional>

#include "bench_run/request.h"
#include "common/error.h"
#include "store/store.h"

namespace mgk::bench_run {

// Where the store is: the command line knows (--db, $MGK_DB, the default). --status only
// reads it; every other form writes.
struct Stores {
  std::function<store::Store()> open, open_to_read;
};

ExitCode run(const Request& r, const Stores& stores);

}  // namespace mgk::bench_run
