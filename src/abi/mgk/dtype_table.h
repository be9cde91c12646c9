// The one table of element types: name, size, float or integer, unit roundoff. The harness,
// the candidate process, the solution helpers (solution.h) and the host side (problem specs,
// the evaluator) all read it; nothing else spells a dtype's size or name. C++17, no CUDA.
#pragma once
#include <stddef.h>

#include <string_view>

#include "mgk/dtype.h"

namespace mgk {

struct DTypeInfo {
  mgk_dtype id;
  const char* name;
  int bytes;
  bool is_float;
  double unit_roundoff;  // half the machine epsilon; 0 for integers
};

inline constexpr DTypeInfo kDTypes[] = {
    {MGK_BF16, "bf16", 2, true, 0x1p-8},  {MGK_F16, "f16", 2, true, 0x1p-11}, {MGK_F32, "f32", 4, true, 0x1p-24},
    {MGK_F64, "f64", 8, true, 0x1p-53},   {MGK_I32, "i32", 4, false, 0},      {MGK_I64, "i64", 8, false, 0},
    {MGK_U8, "u8", 1, false, 0},
    // fp8: 3 and 2 mantissa bits, so u = 2^-4 and 2^-3 (for normal values).
    {MGK_E4M3, "e4m3", 1, true, 0x1p-4}, {MGK_E5M2, "e5m2", 1, true, 0x1p-3},
};

// nullptr for a value outside the table (a corrupt descriptor).
constexpr const DTypeInfo* dtype_info(mgk_dtype t) {
  for (const auto& d : kDTypes)
    if (d.id == t) return &d;
  return nullptr;
}
constexpr const DTypeInfo* dtype_info(std::string_view name) {
  for (const auto& d : kDTypes)
    if (name == d.name) return &d;
  return nullptr;
}

constexpr size_t dtype_size(mgk_dtype t) {
  const DTypeInfo* d = dtype_info(t);
  return d ? size_t(d->bytes) : 0;
}
constexpr bool dtype_is_float(mgk_dtype t) {
  const DTypeInfo* d = dtype_info(t);
  return d && d->is_float;
}
constexpr const char* dtype_name(mgk_dtype t) {
  const DTypeInfo* d = dtype_info(t);
  return d ? d->name : "?";
}

}  // namespace mgk
