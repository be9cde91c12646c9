#include "common/text.h"

#include <cstdio>

namespace mgk {

std::string cut_marker(size_t cut_chars) {
  return "\n[... " + std::to_string(cut_chars) + " characters cut ...]\n";
}

std::string cut_middle(std::string_view text, size_t limit, size_t keep) {
  if (text.size() <= limit) return std::string(text);
  // Both cuts fall between characters, never inside one: a UTF-8 sequence cut in two is
  // invalid, and the JSON a provider is sent could not be written.
  auto continuation = [&](size_t i) { return (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80; };
  size_t head = keep, tail = text.size() - keep;
  for (int n = 0; n < 3 && head > 0 && continuation(head); ++n) --head;
  for (int n = 0; n < 3 && tail < text.size() && continuation(tail); ++n) ++tail;
  std::string out;
  out.reserve(2 * keep + 48);
  out.append(text.substr(0, head));
  out.append(cut_marker(tail - head));
  out.append(text.substr(tail));
  return out;
}

namespace {
// Length of the well-formed UTF-8 sequence starting at s[i], or 0 if there is none
// (RFC 3629: no overlongs, no surrogates, nothing above U+10FFFF).
size_t utf8_sequence_length(std::string_view s, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = byte(i);
  if (c < 0x80) return 1;
  size_t n;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) n = 2;
  else if (c == 0xE0) n = 3, lo = 0xA0;
  else if (c >= 0xE1 && c <= 0xEC) n = 3;
  else if (c == 0xED) n = 3, hi = 0x9F;
  else if (c >= 0xEE && c <= 0xEF) n = 3;
  else if (c == 0xF0) n = 4, lo = 0x90;
  else if (c >= 0xF1 && c <= 0xF3) n = 4;
  else if (c == 0xF4) n = 4, hi = 0x8F;
  else return 0;
  if (i + n > s.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k)
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  return n;
}
}  // namespace

std::string to_valid_utf8(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (size_t i = 0; i < bytes.size();) {
    size_t n = utf8_sequence_length(bytes, i);
    if (n == 0) {
      out.append("\xEF\xBF\xBD");
      ++i;
    } else {
      out.append(bytes.substr(i, n));
      i += n;
    }
  }
  return out;
}

std::string chomp(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

std::string plain_number(double v) {
  char buf[64];
  if (v == static_cast<double>(static_cast<long long>(v)) && v > -1e18 && v < 1e18)
    std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
  else
    std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace mgk
