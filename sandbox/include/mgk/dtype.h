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
} mgk_dtype;

#ifdef __cplusplus
}  // extern "C"
#endif
