#include "process/output.h"

#include <algorithm>

namespace mgk::process {

OutputCollector::OutputCollector(size_t limit, size_t keep) : limit_(limit), keep_(keep) {
  keep_ = std::min(keep_, limit_ / 2);
}

void OutputCollector::append(std::string_view chunk) {
  total_ += chunk.size();
  if (head_.size() < limit_)
    head_.append(chunk.substr(0, std::min(chunk.size(), limit_ - head_.size())));
  if (keep_ == 0) return;
  if (chunk.size() >= keep_) {  // the chunk alone fills the ring
    tail_.assign(chunk.substr(chunk.size() - keep_));
    tail_start_ = 0;
    return;
  }
  for (char c : chunk) {
    if (tail_.size() < keep_) {
      tail_.push_back(c);
    } else {
      tail_[tail_start_] = c;
      tail_start_ = (tail_start_ + 1) % keep_;
    }
  }
}

std::string OutputCollector::text() const {
  if (total_ <= limit_) return to_valid_utf8(head_);
  std::string out = head_.substr(0, keep_);
  out += cut_marker(total_ - 2 * keep_);
  out += tail_.substr(tail_start_);
  out += tail_.substr(0, tail_start_);
  return to_valid_utf8(out);
}

}  // namespace mgk::process
