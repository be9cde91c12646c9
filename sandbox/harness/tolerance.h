// Whether one output element passes, shared by the GPU check kernel and the host unit tests
// (plain C++ when not compiled by nvcc).
#pragma once
#include <cmath>

#ifdef __CUDACC__
#define MGK_HD __host__ __device__
#else
#define MGK_HD
#endif

#include "wire/check_spec.h"

namespace mgk::harness {

using wire::CheckKind;
using wire::CheckSpec;

// The largest |got - expected| allowed for a float element. For kRounding `scale` is what
// the oracle says the rounding error scales with (a sum: the sum of |terms|); the tiny
// constant lets an exact zero with zero-magnitude terms pass.
MGK_HD inline double allowed_error(const CheckSpec& spec, double expected, double scale) {
  switch (spec.kind) {
    case CheckKind::kExact: return 0;
    case CheckKind::kRounding: return spec.factor * spec.unit_roundoff * scale + 1e-30;
    case CheckKind::kAllclose: return spec.atol + spec.rtol * fabs(expected);
  }
  return 0;
}

// |got - expected| over the allowed error: at most 1 passes. 0 for outputs compared exactly
// (a ratio says nothing there) and for equal values; a huge value (1e30) for NaN, an
// unequal infinity, or an error where none is allowed.
MGK_HD inline double error_ratio(const CheckSpec& spec, double got, double expected, double scale) {
  using std::isinf;
  if (spec.kind == CheckKind::kExact) return 0;
  if (got != got || ((isinf(got) || isinf(expected)) && got != expected)) return 1e30;
  if (got == expected) return 0;
  const double allowed = allowed_error(spec, expected, scale);
  const double d = fabs(got - expected);
  return allowed > 0 ? d / allowed : 1e30;
}

// NaN never passes; infinities only when equal; exact means equal including the sign of zero.
MGK_HD inline bool float_element_ok(const CheckSpec& spec, double got, double expected, double scale) {
  using std::isinf;  // host: std::; device: CUDA's overloads
  using std::signbit;
  if (got != got) return false;
  if (spec.kind == CheckKind::kExact) return got == expected && signbit(got) == signbit(expected);
  if (isinf(got) || isinf(expected)) return got == expected;
  return fabs(got - expected) <= allowed_error(spec, expected, scale);
}

}  // namespace mgk::harness
