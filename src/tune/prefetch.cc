#include "tune/prefetch.h"

#include "common/error.h"
#include "common/interrupt.h"
#include "common/log.h"

#include <stdexcept>

namespace mgk::tune {

Prefetcher::Prefetcher(std::vector<Config> items, Prepare prepare, std::size_t lookahead)
    : items_(std::move(items)), prepare_(std::move(prepare)), lookahead_(lookahead),
      thread_([this] { work(); }) {}

Prefetcher::~Prefetcher() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void Prefetcher::work() {
  for (std::size_t i = 0; i < items_.size(); ++i) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stop_ || i <= wanted_ + lookahead_; });
      if (stop_) return;
    }
    try {
      prepare_(items_[i]);
    } catch (const Interrupted&) {
      // Ctrl-C: prepare nothing more, and release wait_for(); the tuner sees the flag.
      {
        std::lock_guard<std::mutex> lock(mu_);
        prepared_ = items_.size();
      }
      cv_.notify_all();
      return;
    } catch (const Error& e) {
      log::warning(std::string("preparing a configuration ahead failed (the evaluation "
                               "will retry it): ") + e.what());
    } catch (...) {
      std::lock_guard<std::mutex> lock(mu_);
      bug_ = std::current_exception();
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      prepared_ = i + 1;
    }
    cv_.notify_all();
  }
}

void Prefetcher::wait_for(std::size_t i) {
  if (i >= items_.size()) throw std::logic_error("Prefetcher::wait_for past the batch");
  std::unique_lock<std::mutex> lock(mu_);
  wanted_ = i;
  cv_.notify_all();
  cv_.wait(lock, [&] { return prepared_ > i || bug_ != nullptr; });
  if (bug_) std::rethrow_exception(bug_);
}

}  // namespace mgk::tune
