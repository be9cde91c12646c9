// Numbers and lists as text for reports, tables, feedback and error messages.
#pragma once
#include <string>
#include <string_view>

namespace mgk {

// `v` with exactly `digits` digits after the point (printf "%.*f"): fixed(1.234, 1) == "1.2".
std::string fixed(double v, int digits);

// The strings of `items` (any range of them: a vector, a set) with `sep` between them:
// join({"tiny", "odd"}) == "tiny, odd"; empty for no items.
template <class Strings>
std::string join(const Strings& items, std::string_view sep = ", ") {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += sep;
    out += item;
  }
  return out;
}

}  // namespace mgk
