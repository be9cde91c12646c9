// What one array task of a Slurm run runs on its node (`mgk bench --shard K/N --run-file F`,
// as the run's script calls it): its shard of the run's attempts, with the local executor,
// into the task's own store, which `mgk bench --merge` later folds into the run.
#pragma once
#include <functional>

#include "bench_run/request.h"
#include "common/error.h"
#include "store/store.h"

namespace mgk::bench_run {

// `open_store`: the task's store (--db), opened once the run file has been read.
ExitCode run_array_task(const Request& r, const std::function<store::Store()>& open_store);

}  // namespace mgk::bench_run
