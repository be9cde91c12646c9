// Numbers as text for reports, tables and feedback.
#pragma once
#include <string>

namespace mgk {

// `v` with exactly `digits` digits after the point (printf "%.*f"): fixed(1.234, 1) == "1.2".
std::string fixed(double v, int digits);

}  // namespace mgk
