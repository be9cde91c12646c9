// What a sandboxed command printed, kept within a size the model's context can afford, in
// bounded memory however long the stream: cut in the middle and made valid UTF-8 as
// common/text.h does it.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

#include "common/text.h"

namespace mgk::process {

// Collects a stream of unbounded length in bounded memory: the first `keep` bytes, the
// last `keep` bytes and a count, so that text() equals cut_middle() of the whole stream.
class OutputCollector {
 public:
  explicit OutputCollector(size_t limit = kOutputLimit, size_t keep = kOutputKeep);
  void append(std::string_view chunk);
  size_t total_bytes() const { return total_; }
  // The (possibly cut) output as valid UTF-8.
  std::string text() const;

 private:
  size_t limit_, keep_;
  size_t total_ = 0;
  std::string head_;  // the first min(total, limit) bytes
  std::string tail_;  // once past the limit: a ring of the last `keep_` bytes
  size_t tail_start_ = 0;  // index in tail_ of the oldest byte
};

}  // namespace mgk::process
