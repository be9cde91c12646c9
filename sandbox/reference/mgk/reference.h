// Conveniences for references: the NCCL communicator from ctx, dtype mapping, error checks.
// References are the baselines (PyTorch+NCCL in ParallelKernelBench); they also export the
// oracle that judges every candidate.
#pragma once
#include <nccl.h>

#include <algorithm>
#include <cstdint>

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
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 24, 0)
    case MGK_E4M3: return ncclFloat8e4m3;
    case MGK_E5M2: return ncclFloat8e5m2;
#else
    case MGK_E4M3:
    case MGK_E5M2: return ncclUint8;  // bytes: only data movement is valid for fp8 before 2.24
#endif
  }
  return ncclFloat32;
}

namespace detail {
// One 16-byte vector a thread: vector v of row `row` of block r, for every (row, r, v). A
// template so that every reference may include this header (nvcc ignores `inline` on a
// __global__ function, and says so in every build).
template <class = void>
__global__ void blocks_side_by_side_kernel(const uint4* src, int64_t block_vecs, uint4* dst, int64_t rows,
                                           int64_t row_vecs, int world) {
  const int64_t total = rows * world * row_vecs;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t v = i % row_vecs, r = (i / row_vecs) % world, row = i / (row_vecs * world);
    dst[i] = src[r * block_vecs + row * row_vecs + v];
  }
}
}  // namespace detail

// The W blocks an all-gather delivers one after the other (block r at src + r * block_bytes,
// rows x cols elements of `elt` bytes each) laid side by side: dst (rows x W * cols,
// row-major) holds block r at columns [r * cols, (r + 1) * cols). One pass of 16-byte
// vectors when every row and block is 16-byte aligned (the cost of a torch.cat), W strided
// copies otherwise.
inline cudaError_t blocks_side_by_side(const void* src, size_t block_bytes, void* dst, int64_t rows, int64_t cols,
                                       size_t elt, int world, cudaStream_t s) {
  const size_t width = size_t(cols) * elt;
  if (rows <= 0 || width == 0) return cudaSuccess;
  const bool vectors = width % 16 == 0 && block_bytes % 16 == 0 && reinterpret_cast<uintptr_t>(src) % 16 == 0 &&
                       reinterpret_cast<uintptr_t>(dst) % 16 == 0;
  if (vectors) {
    const int64_t total = rows * world * int64_t(width / 16);
    const int grid = int(std::min<int64_t>((total + 255) / 256, 132 * 16));
    detail::blocks_side_by_side_kernel<><<<grid, 256, 0, s>>>(static_cast<const uint4*>(src), int64_t(block_bytes / 16),
                                                            static_cast<uint4*>(dst), rows, int64_t(width / 16), world);
    return cudaGetLastError();
  }
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
