// What a sandboxed command printed, kept within a size the model's context can afford:
// long outputs are cut in the middle (the start says what ran, the end how it ended),
// the way mini-swe-agent shows them. Output is treated as bytes and made valid UTF-8 so it
// can travel in JSON to a provider and into the store.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace mgk::process {

// Outputs up to this many bytes are shown whole; longer ones keep kOutputKeep at each end.
inline constexpr size_t kOutputLimit = 10000;
inline constexpr size_t kOutputKeep = 5000;

// The marker put where the middle was cut: "\n[... N characters cut ...]\n".
std::string cut_marker(size_t cut_chars);

// `text` itself when it has at most `limit` bytes, else its first `keep` bytes, the marker
// and its last `keep` bytes (limit >= 2 * keep). The marker counts the bytes left out.
std::string cut_middle(std::string_view text, size_t limit = kOutputLimit,
                       size_t keep = kOutputKeep);

// Replaces every byte that is not part of a well-formed UTF-8 sequence with U+FFFD.
std::string to_valid_utf8(std::string_view bytes);

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
