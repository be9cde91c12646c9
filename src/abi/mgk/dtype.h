// The element types of the solution ABI, as plain C (abi.h includes it). The one table of
// their names and sizes is dtype_table.h; every other part of mgk reads it from there.
#pragma once

#ifdef __cplusplus
extern "C" {
#endif

typedef enum mgk_dtype {
  MGK_BF16 = 0,
  MGK_F16 = 1,
  MGK_F32 = 2,
  MGK_F64 = 3,
  MGK_I32 = 4,
  MGK_I64 = 5,
  MGK_U8 = 6,
  // fp8, one byte: e4m3 is float8_e4m3fn (finite only: no infinity, 0x7F/0xFF are NaN, the
  // largest value is 448, conversions saturate); e5m2 is IEEE-like (infinities, max 57344).
  MGK_E4M3 = 7,
  MGK_E5M2 = 8,
} mgk_dtype;

#ifdef __cplusplus
}  // extern "C"
#endif
