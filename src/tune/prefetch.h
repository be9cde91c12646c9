// Overlaps preparation (compiling on the CPU) of the next configurations with the
// measurement (on the GPU) of the current one: one background thread walks a batch in order,
// at most `lookahead` items ahead of the item the tuner is about to measure.
#pragma once
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "tune/space.h"

namespace mgk::tune {

class Prefetcher {
 public:
  using Prepare = std::function<void(const Config&)>;

  // Starts preparing items[0] at once.
  Prefetcher(std::vector<Config> items, Prepare prepare, std::size_t lookahead);
  // Lets the item in preparation finish, prepares nothing more, joins the thread.
  ~Prefetcher();
  Prefetcher(const Prefetcher&) = delete;
  Prefetcher& operator=(const Prefetcher&) = delete;

  // Blocks until items[i] has been prepared, and lets the thread run ahead to
  // items[i + lookahead]. `i` never decreases between calls. A failure of prepare() that is
  // an mgk::Error is logged (measure() will meet it again); any other exception is a bug and
  // is rethrown here.
  void wait_for(std::size_t i);

 private:
  void work();

  std::vector<Config> items_;
  Prepare prepare_;
  std::size_t lookahead_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::size_t wanted_ = 0;    // the item the tuner waits for or measures
  std::size_t prepared_ = 0;  // items [0, prepared_) are done
  bool stop_ = false;
  std::exception_ptr bug_;
  std::thread thread_;  // last: starts after the members above exist
};

}  // namespace mgk::tune
