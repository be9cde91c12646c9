#include "bench_run/progress.h"

#include <cstdio>

#include <nlohmann/json.hpp>

namespace mgk::bench_run {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

std::string money(const std::optional<double>& usd) {
  if (!usd) return "$?";
  char b[32];
  std::snprintf(b, sizeof b, "$%.2f", *usd);
  return b;
}

nlohmann::json or_null(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }

}  // namespace

Progress::Progress(std::ostream& out, Style style, std::string title, int total, int workers, Counts before)
    : out_(out), style_(style), title_(std::move(title)), total_(total), counts_(before),
      done_before_(before.done), workers_(size_t(std::max(workers, 0))), start_(std::chrono::steady_clock::now()) {
  std::lock_guard lock(mu_);
  if (style_ == Style::kJson) {
    out_ << nlohmann::json{{"event", "start"}, {"title", title_}, {"total", total_}, {"done", counts_.done}}.dump()
         << std::endl;
  } else {
    out_ << title_ << "\n";
    if (counts_.done > 0) out_ << counts_.done << " of " << total_ << " attempts were finished before: skipped\n";
    out_.flush();
  }
  redraw(true);
}

std::string Progress::clock(double s) {
  if (s < 0) return "-";
  char b[32];
  long t = long(s + 0.5);
  if (t < 3600) std::snprintf(b, sizeof b, "%ldm%02lds", t / 60, t % 60);
  else std::snprintf(b, sizeof b, "%ldh%02ldm", t / 3600, (t % 3600) / 60);
  return b;
}

std::string Progress::status_line() const {
  const double elapsed = seconds_since(start_);
  const int done_now = counts_.done - done_before_, left = total_ - counts_.done;
  const double eta = done_now > 0 ? elapsed / done_now * left : -1;
  std::string bar;
  if (style_ == Style::kLive) {
    const int width = 24, filled = total_ > 0 ? counts_.done * width / total_ : width;
    bar = "[" + std::string(size_t(filled), '#') + std::string(size_t(width - filled), '.') + "] ";
  }
  return bar + std::to_string(counts_.done) + "/" + std::to_string(total_) + " done  correct " +
         std::to_string(counts_.correct) + "  fast " + std::to_string(counts_.fast) +
         (counts_.compiled ? "  compiled " + std::to_string(counts_.compiled) : "") + "  " + money(counts_.spent_usd) +
         "  elapsed " + clock(elapsed) + "  ETA " + (left == 0 ? "0m00s" : clock(eta));
}

void Progress::clear_live() {
  // Back to the first line of the block, then erase to the end of the screen.
  if (drawn_lines_ > 0) out_ << "\x1b[" << drawn_lines_ << "F\x1b[J";
  drawn_lines_ = 0;
}

void Progress::redraw(bool force) {
  if (style_ != Style::kLive || closed_) return;
  auto now = std::chrono::steady_clock::now();
  if (!force && now - last_draw_ < std::chrono::milliseconds(200)) return;
  last_draw_ = now;
  clear_live();
  std::string block = status_line() + "\n";
  for (size_t w = 0; w < workers_.size(); ++w)
    block += "  worker " + std::to_string(w + 1) + ": " + (workers_[w].empty() ? "idle" : workers_[w]) + "\n";
  out_ << block << std::flush;
  drawn_lines_ = int(workers_.size()) + 1;
}

void Progress::worker(int index, const std::string& status) {
  std::lock_guard lock(mu_);
  if (index < 0 || size_t(index) >= workers_.size()) return;
  workers_[size_t(index)] = status;
  redraw(false);
}

void Progress::attempt_done(const AttemptKey& key, int64_t attempt_id, const std::string& outcome, bool correct,
                            bool fast, bool compiled, const std::optional<double>& cost_usd) {
  std::lock_guard lock(mu_);
  ++counts_.done;
  counts_.correct += correct;
  counts_.fast += fast;
  counts_.compiled += compiled;
  const std::string what = key.problem + " sample " + std::to_string(key.sample) + ": " + outcome + " (attempt " +
                           std::to_string(attempt_id) + ", " + money(cost_usd) + ")";
  switch (style_) {
    case Style::kJson:
      out_ << nlohmann::json{{"event", "attempt"}, {"problem", key.problem}, {"sample", key.sample},
                             {"attempt", attempt_id}, {"outcome", outcome}, {"cost_usd", or_null(cost_usd)},
                             {"done", counts_.done}, {"total", total_}, {"correct", counts_.correct},
                             {"fast", counts_.fast}, {"spent_usd", or_null(counts_.spent_usd)}}
                  .dump()
           << std::endl;
      break;
    case Style::kLines:
      out_ << "[" << counts_.done << "/" << total_ << "] " << what << "  | " << status_line() << std::endl;
      break;
    case Style::kLive:
      clear_live();
      out_ << what << "\n";
      redraw(true);
      break;
  }
}

void Progress::spent(const std::optional<double>& total_usd) {
  std::lock_guard lock(mu_);
  counts_.spent_usd = total_usd;
  redraw(false);
}

void Progress::note(const std::string& line) {
  std::lock_guard lock(mu_);
  if (style_ == Style::kJson) {
    out_ << nlohmann::json{{"event", "note"}, {"message", line}}.dump() << std::endl;
    return;
  }
  clear_live();
  out_ << line << "\n";
  redraw(true);
  out_.flush();
}

void Progress::close() {
  std::lock_guard lock(mu_);
  if (closed_) return;
  for (auto& w : workers_) w.clear();
  if (style_ == Style::kJson) {
    out_ << nlohmann::json{{"event", "end"}, {"done", counts_.done}, {"total", total_}, {"correct", counts_.correct},
                           {"fast", counts_.fast}, {"spent_usd", or_null(counts_.spent_usd)}}
                .dump()
         << std::endl;
  } else if (style_ == Style::kLive) {
    clear_live();
    out_ << status_line() << "\n" << std::flush;
  } else {
    out_ << status_line() << std::endl;
  }
  closed_ = true;
}

}  // namespace mgk::bench_run
