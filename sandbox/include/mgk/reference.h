// Conveniences for references: the NCCL communicator from ctx, dtype mapping, error checks.
// References are the baselines (PyTorch+NCCL in ParallelKernelBench); they also export the
// oracle that judges every candidate.
#pragma once
#include <nccl.h>

#include "mgk/oracle.cuh"
#include "mgk/solution.h"

namespace mgk {

inline ncclComm_t comm(mgk_ctx* ctx) { return static_cast<ncclComm_t>(ctx->nccl_comm); }

inline ncclDataType_t nccl_type(mgk_dtype t) {
  switch (t) {
    case MGK_BF16: return ncclBfloat16;
    case MGK_F16: return ncclFloat16;
    case MGK_F32: return ncclFloat32;
    case MGK_F64: return ncclFloat64;
    case MGK_I32: return ncclInt32;
    case MGK_I64: return ncclInt64;
    case MGK_U8: return ncclUint8;
  }
  return ncclFloat32;
}

// The W blocks an all-gather delivers one after the other (block r at src + r * block_bytes,
// rows x cols elements of `elt` bytes each) laid side by side: dst (rows x W * cols,
// row-major) holds block r at columns [r * cols, (r + 1) * cols). W strided copies.
inline cudaError_t blocks_side_by_side(const void* src, size_t block_bytes, void* dst, int64_t rows, int64_t cols,
                                       size_t elt, int world, cudaStream_t s) {
  const size_t width = size_t(cols) * elt;
  for (int r = 0; r < world; ++r) {
    cudaError_t e = cudaMemcpy2DAsync(static_cast<char*>(dst) + r * width, world * width,
                                      static_cast<const char*>(src) + r * block_bytes, width, width, size_t(rows),
                                      cudaMemcpyDeviceToDevice, s);
    if (e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

}  // namespace mgk

#define MGK_NCCL_TRY(ctx, expr)                                                               \
  do {                                                                                         \
    ncclResult_t mgk_r_ = (expr);                                                              \
    if (mgk_r_ != ncclSuccess)                                                                 \
      return mgk::set_error((ctx), "%s:%d: %s: %s", __FILE__, __LINE__, #expr,                 \
                            ncclGetErrorString(mgk_r_));                                       \
  } while (0)

// A reference's communication step. With no communicator in the context it is skipped: that
// is how bench/compute times a reference's compute part alone (the harness always gives a
// reference its communicator, and never runs one where NCCL cannot start).
#define MGK_NCCL_STEP(ctx, expr)                 \
  do {                                           \
    if (mgk::comm(ctx)) MGK_NCCL_TRY(ctx, expr); \
  } while (0)
