// What a running bench shows: on a terminal a live block redrawn in place (done / total,
// correct and fast so far, spend, elapsed, ETA, and one line per worker saying what it
// does); otherwise plain lines, one per finished attempt; with --json one JSON object per
// line (events "start", "attempt", "note", "end"). Thread-safe: workers report directly.
#pragma once
#include <optional>
#include <chrono>
#include <mutex>
#include <ostream>
#include <string>
#include <vector>

#include "bench_run/work_list.h"

namespace mgk::bench_run {

class Progress {
 public:
  enum class Style { kLive, kLines, kJson };

  struct Counts {
    int done = 0, correct = 0, fast = 0, compiled = 0;  // fast: correct and > 1x, timed
    std::optional<double> spent_usd = 0.0;  // none: unknown (a model with no price)
  };

  // `total`: the planned attempts; `before`: what earlier sessions of the run finished.
  Progress(std::ostream& out, Style style, std::string title, int total, int workers, Counts before);

  void worker(int index, const std::string& status);  // "" when idle
  // One attempt ended: its one-phrase outcome ("correct 1.42x", "wrong", ...).
  void attempt_done(const AttemptKey& key, int64_t attempt_id, const std::string& outcome, bool correct, bool fast,
                    bool compiled, const std::optional<double>& cost_usd);
  // The run's spend so far, earlier sessions included; none: unknown, shown "$?".
  void spent(const std::optional<double>& total_usd);
  void note(const std::string& line);  // a warning or an error, printed above the display
  void close();                        // the last redraw; the display stays on screen

  // "1m05s", "-" for unknown, for the ETA and elapsed fields.
  static std::string clock(double seconds);

 private:
  std::string status_line() const;
  void redraw(bool force);
  void clear_live();

  std::ostream& out_;
  Style style_;
  std::string title_;
  int total_;
  Counts counts_;
  int done_before_;
  std::vector<std::string> workers_;
  std::chrono::steady_clock::time_point start_, last_draw_{};
  int drawn_lines_ = 0;
  bool closed_ = false;
  std::mutex mu_;
};

}  // namespace mgk::bench_run
