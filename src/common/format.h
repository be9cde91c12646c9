// Numbers and lists as text for reports, tables, feedback and error messages.
#pragma once
#include <concepts>
#include <ranges>
#include <string>
#include <string_view>

namespace mgk {

// `v` with exactly `digits` digits after the point (printf "%.*f"): fixed(1.234, 1) == "1.2".
std::string fixed(double v, int digits);

// The strings of `items` (any range of them: a vector, a set) with `sep` between them,
// "tiny, odd" for {"tiny", "odd"}; empty for no items. Only strings: a list of numbers would
// be appended as chars.
template <class Strings>
  requires std::convertible_to<std::ranges::range_value_t<Strings>, std::string_view>
std::string join(const Strings& items, std::string_view sep = ", ") {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += sep;
    out += item;
  }
  return out;
}

}  // namespace mgk
