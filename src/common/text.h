// Text shown to the model and stored: long texts cut in the middle (the start says what ran,
// the end how it ended, the way mini-swe-agent shows outputs), and bytes made valid UTF-8 so
// they can travel in JSON to a provider and into the store.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace mgk {

// Texts up to this many bytes are shown whole; longer ones keep kOutputKeep at each end.
inline constexpr size_t kOutputLimit = 10000;
inline constexpr size_t kOutputKeep = 5000;

// The marker put where the middle was cut: "\n[... N characters cut ...]\n".
std::string cut_marker(size_t cut_chars);

// `text` itself when it has at most `limit` bytes, else its first `keep` bytes, the marker
// and its last `keep` bytes (limit >= 2 * keep). The marker counts the bytes left out.
std::string cut_middle(std::string_view text, size_t limit = kOutputLimit, size_t keep = kOutputKeep);

// `s` without its trailing newlines, carriage returns and spaces: a multi-line value goes
// into a template without them, and the template owns the layout around it.
std::string chomp(std::string s);

// A number as a person writes it: an integral value without a decimal point ("20"), else
// the shortest %g form ("0.5").
std::string plain_number(double v);

// Replaces every byte that is not part of a well-formed UTF-8 sequence with U+FFFD.
std::string to_valid_utf8(std::string_view bytes);

}  // namespace mgk
