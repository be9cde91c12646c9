// The judge of a bench attempt: eval::evaluate with the problem's options, on a GPU group
// taken from the pool for the length of one evaluation (so evaluations of different
// attempts run at once only on disjoint GPUs), or on a fixed group the attempt holds.
// With no pool (--compile-only) it only compiles and needs no GPU.
#pragma once
#include <atomic>
#include <functional>
#include <string>

#include "agent/judge.h"
#include "bench_run/gpu_pool.h"

namespace mgk::bench_run {

class PooledJudge : public agent::Judge {
 public:
  using Status = std::function<void(const std::string&)>;
  // `pool` null: options are used as they are (compile only, or GPUs fixed by the caller).
  PooledJudge(eval::EvalOptions options, GpuPool* pool, const std::atomic<bool>* cancel, Status status);
  results::EvalResult judge(const std::filesystem::path& kernel_file) override;

 private:
  eval::EvalOptions options_;
  GpuPool* pool_;
  const std::atomic<bool>* cancel_;
  Status status_;
};

}  // namespace mgk::bench_run
