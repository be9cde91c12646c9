// Runs a bench's remaining work on this machine: `jobs` threads, each taking the next work
// item and running it to its end (every turn stored as it completes, by the agent). A
// budget over the whole run is shared by the attempts in flight: each model call holds its
// worst case first (agent/shared_budget.h), so together they never cross it; a call that
// cannot fit waits for the calls in flight to settle, and when it still cannot the run
// stops: no attempt starts, and those in flight end before their next model call, left
// "interrupted" for a resume. Ctrl-C does the same. One attempt failing with an error is
// reported and the others go on; several in a row stop the run (the cause is likely the
// machine, not the model).
#pragma once
#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "agent/shared_budget.h"
#include "bench_run/work_list.h"

namespace mgk::bench_run {

enum class StopReason { kFinished, kInterrupted, kBudget, kErrors };
const char* to_string(StopReason r);

struct ExecutorOptions {
  int jobs = 4;
  double max_cost_usd = 0;      // the whole run; 0: none
  double spent_before_usd = 0;  // what earlier sessions of the run cost
  int max_errors_in_a_row = 5;
};

class LocalExecutor : public agent::SharedBudget {
 public:
  // Runs one item to its end on worker `worker` (0-based). Errors it throws are reported
  // through on_error (mgk::Interrupted stops the run instead).
  using RunItem = std::function<void(const WorkItem& item, int worker)>;

  LocalExecutor(ExecutorOptions options, const std::atomic<bool>* interrupt);

  // Set once the run must stop taking work (budget or errors); what agents poll.
  const std::atomic<bool>& stop_flag() const { return stop_; }
  // The run's budget, shared by the attempts' model calls.
  bool hold(double worst_usd) override;
  void settle(double held_usd, double cost_usd) override;
  double spent() const;  // the run's spend so far (earlier sessions included)

  std::function<void(const WorkItem& item, const std::string& error)> on_error;

  StopReason run(const std::vector<WorkItem>& items, const RunItem& run_item);

 private:
  void worker(int index, const std::vector<WorkItem>& items, const RunItem& run_item);
  bool should_stop() const;

  ExecutorOptions options_;
  const std::atomic<bool>* interrupt_;
  std::atomic<bool> stop_{false};
  std::atomic<size_t> next_{0};
  mutable std::mutex mu_;
  std::condition_variable settled_;
  double spent_ = 0, held_ = 0;
  int errors_in_a_row_ = 0;
  StopReason reason_ = StopReason::kFinished;
};

}  // namespace mgk::bench_run
