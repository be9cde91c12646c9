// Error checks for cuBLAS and cuBLASLt calls in solutions and oracles (link -lcublas).
#pragma once
#include <cublas_api.h>

#include "mgk/solution.h"

// Return from the enclosing solution function with the cuBLAS(Lt) status as ctx->error.
#define MGK_CUBLAS_TRY(ctx, expr)                                                    \
  do {                                                                                \
    cublasStatus_t mgk_st_ = (expr);                                                  \
    if (mgk_st_ != CUBLAS_STATUS_SUCCESS)                                             \
      return mgk::set_error((ctx), "%s:%d: %s: %s", __FILE__, __LINE__, #expr,        \
                            cublasGetStatusString(mgk_st_));                          \
  } while (0)
