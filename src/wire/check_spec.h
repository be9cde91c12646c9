// How one output is compared with the oracle: shared by the host (which derives it from the
// problem's tolerance), the protocol (which carries it) and the harness's check kernel.
// Plain C++, no CUDA and no JSON, so nvcc and the host compiler both take it.
#pragma once

namespace mgk::wire {

enum class CheckKind { kExact = 0, kRounding = 1, kAllclose = 2 };

struct CheckSpec {
  CheckKind kind = CheckKind::kExact;
  double factor = 1;  // rounding: factor * unit_roundoff * scale
  double unit_roundoff = 0;
  double atol = 0, rtol = 0;
};

}  // namespace mgk::wire
