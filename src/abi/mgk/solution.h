// Conveniences for writing a solution (reference, expert or candidate) against abi.h.
// Header-only, C++ (compiled by nvcc).
#pragma once
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "mgk/abi.h"
#include "mgk/dtype_table.h"

#define MGK_EXPORT extern "C" __attribute__((visibility("default")))

namespace mgk {

inline int set_error(mgk_ctx* ctx, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(ctx->error, MGK_ERROR_CAPACITY, fmt, ap);
  va_end(ap);
  return 1;
}

// The value of a dim of the current size preset; -1 (and an error message) if unknown.
inline long long dim(mgk_ctx* ctx, const char* name) {
  for (int i = 0; i < ctx->num_dims; ++i)
    if (std::strcmp(ctx->dim_names[i], name) == 0) return ctx->dim_values[i];
  set_error(ctx, "unknown dim '%s'", name);
  return -1;
}

inline const mgk_tensor* find(const mgk_tensor* ts, int n, const char* name) {
  for (int i = 0; i < n; ++i)
    if (std::strcmp(ts[i].name, name) == 0) return &ts[i];
  return nullptr;
}

inline size_t nbytes(const mgk_tensor& t) { return size_t(t.numel) * dtype_size(t.dtype); }

// Bytes per element of input `name`, from the descriptors mgk_setup gets (ctx->inputs);
// 0 (and an error message) if there is no such input.
inline size_t input_elem_bytes(mgk_ctx* ctx, const char* name) {
  const mgk_tensor* t = find(ctx->inputs, ctx->num_inputs, name);
  if (!t) {
    set_error(ctx, "no input named '%s'", name);
    return 0;
  }
  return dtype_size(t->dtype);
}

}  // namespace mgk

// Return from the enclosing solution function with the CUDA error as ctx->error.
#define MGK_CUDA_TRY(ctx, expr)                                                          \
  do {                                                                                    \
    cudaError_t mgk_err_ = (expr);                                                        \
    if (mgk_err_ != cudaSuccess)                                                          \
      return mgk::set_error((ctx), "%s:%d: %s: %s", __FILE__, __LINE__, #expr,            \
                            cudaGetErrorString(mgk_err_));                                \
  } while (0)

// Same, after a kernel launch.
#define MGK_LAUNCH_CHECK(ctx) MGK_CUDA_TRY(ctx, cudaGetLastError())
