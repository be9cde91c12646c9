#include "bench_run/pooled_judge.h"

#include <optional>

namespace mgk::bench_run {

PooledJudge::PooledJudge(eval::EvalOptions options, GpuPool* pool, const std::atomic<bool>* cancel, Status status)
    : options_(std::move(options)), pool_(pool), cancel_(cancel), status_(std::move(status)) {}

results::EvalResult PooledJudge::judge(const std::filesystem::path& kernel_file) {
  eval::EvalOptions o = options_;
  o.kernel = kernel_file;
  o.kernel_is_reference = false;
  std::optional<GpuPool::Lease> lease;
  if (pool_ && !o.compile_only) {
    if (status_) status_("waiting for " + std::to_string(o.plan.world_size) + " rank(s) of GPU");
    lease.emplace(pool_->acquire(o.plan.world_size, cancel_));
    o.gpus = lease->rank_gpus();
  }
  if (status_)
    status_(o.compile_only ? "compiling" : "evaluating on GPUs " + gpu_list(o.gpus) +
                                               (eval::ranks_share_gpu(o.gpus) ? " (ranks share, not timed)" : ""));
  results::EvalResult r = eval::evaluate(o);
  if (status_) status_("");
  return r;
}

}  // namespace mgk::bench_run
