#include "bench_run/local_executor.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "common/interrupt.h"

namespace mgk::bench_run {

const char* to_string(StopReason r) {
  switch (r) {
    case StopReason::kFinished: return "finished";
    case StopReason::kInterrupted: return "interrupted";
    case StopReason::kBudget: return "budget spent";
    case StopReason::kErrors: return "errors";
  }
  return "finished";
}

LocalExecutor::LocalExecutor(ExecutorOptions options, const std::atomic<bool>* interrupt)
    : options_(options), interrupt_(interrupt), spent_(options.spent_before_usd) {
  if (options_.max_cost_usd > 0 && spent_ >= options_.max_cost_usd) {
    reason_ = StopReason::kBudget;
    stop_ = true;
  }
}

bool LocalExecutor::hold(double worst_usd) {
  std::unique_lock lock(mu_);
  const double max = options_.max_cost_usd;
  for (;;) {
    if (should_stop()) return false;
    if (max <= 0 || spent_ + held_ + worst_usd <= max) {
      held_ += worst_usd;
      return true;
    }
    // Calls in flight hold their worst case and usually cost far less: wait for them. With
    // none in flight the call cannot fit at all.
    if (held_ <= 1e-12) {
      reason_ = StopReason::kBudget;
      stop_ = true;
      settled_.notify_all();
      return false;
    }
    settled_.wait_for(lock, std::chrono::milliseconds(100));  // and look at Ctrl-C meanwhile
  }
}

void LocalExecutor::settle(double held_usd, double cost_usd) {
  std::lock_guard lock(mu_);
  held_ = std::max(0.0, held_ - held_usd);
  spent_ += cost_usd;
  if (options_.max_cost_usd > 0 && spent_ >= options_.max_cost_usd && !stop_) {
    reason_ = StopReason::kBudget;
    stop_ = true;
  }
  settled_.notify_all();
}

double LocalExecutor::spent() const {
  std::lock_guard lock(mu_);
  return spent_;
}

bool LocalExecutor::should_stop() const { return stop_ || (interrupt_ && interrupt_->load()); }

void LocalExecutor::worker(int index, const std::vector<WorkItem>& items, const RunItem& run_item) {
  while (!should_stop()) {
    const size_t i = next_++;
    if (i >= items.size()) return;
    try {
      run_item(items[i], index);
      std::lock_guard lock(mu_);
      errors_in_a_row_ = 0;
    } catch (const Interrupted&) {
      return;  // the flag is set: everyone stops
    } catch (const std::exception& e) {
      if (on_error) on_error(items[i], e.what());
      std::lock_guard lock(mu_);
      if (++errors_in_a_row_ >= options_.max_errors_in_a_row && !stop_) {
        reason_ = StopReason::kErrors;
        stop_ = true;
      }
    }
  }
}

StopReason LocalExecutor::run(const std::vector<WorkItem>& items, const RunItem& run_item) {
  const int n = std::max(1, std::min(options_.jobs, int(items.size())));
  std::vector<std::thread> threads;
  for (int w = 0; w < n && !items.empty(); ++w) threads.emplace_back([&, w] { worker(w, items, run_item); });
  for (auto& t : threads) t.join();
  std::lock_guard lock(mu_);
  if (reason_ != StopReason::kFinished) return reason_;
  if (interrupt_ && interrupt_->load()) return StopReason::kInterrupted;
  return next_ >= items.size() ? StopReason::kFinished : StopReason::kInterrupted;
}

}  // namespace mgk::bench_run
