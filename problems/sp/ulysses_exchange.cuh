// What the Ulysses references share (problems/sp/*/reference.cu): the strided copies around
// an exchange, and the exchange itself as one NCCL group of sends and receives. Kept beside
// the problems, so the model sees it with the reference that includes it.
#pragma once
#include <algorithm>

#include "mgk/reference_kit.h"

namespace sp {

// dst[a*da + b*db + c] = src[a*sa + b*sb + c] for a < A, b < B, c < width: every strided
// copy around the exchange (a pack before it, a concatenation after it) is one of these.
// Strides and width in bytes; the widest vector (16 bytes down to 1) that every pointer,
// stride and the width allow, one launch. A warp copies up to kTile vectors of one row, so
// long rows spread over many warps and short ones cost one division per warp.
namespace detail {
constexpr int64_t kTile = 32 * 8;

template <class V>
__global__ void copy3d_kernel(const V* src, int64_t sa, int64_t sb, V* dst, int64_t da, int64_t db, int64_t A,
                              int64_t B, int64_t width) {
  const int64_t tiles = (width + kTile - 1) / kTile, tasks = A * B * tiles;
  const int lane = threadIdx.x % 32;
  for (int64_t t = (blockIdx.x * int64_t(blockDim.x) + threadIdx.x) / 32; t < tasks;
       t += int64_t(gridDim.x) * (blockDim.x / 32)) {
    const int64_t row = t / tiles, c0 = (t % tiles) * kTile, a = row / B, b = row % B;
    const V* s = src + a * sa + b * sb;
    V* d = dst + a * da + b * db;
    const int64_t end = c0 + kTile < width ? c0 + kTile : width;
#pragma unroll 4
    for (int64_t c = c0 + lane; c < end; c += 32) d[c] = s[c];
  }
}

template <class V>
cudaError_t launch(const void* src, int64_t sa, int64_t sb, void* dst, int64_t da, int64_t db, int64_t A, int64_t B,
                   int64_t width, cudaStream_t st) {
  const int64_t v = sizeof(V), tiles = (width / v + kTile - 1) / kTile;
  const int grid = int(std::min<int64_t>((A * B * tiles + 7) / 8, 132 * 16));
  copy3d_kernel<V><<<grid, 256, 0, st>>>(static_cast<const V*>(src), sa / v, sb / v, static_cast<V*>(dst), da / v,
                                         db / v, A, B, width / v);
  return cudaGetLastError();
}

}  // namespace detail

inline cudaError_t copy3d(const void* src, int64_t sa, int64_t sb, void* dst, int64_t da, int64_t db, int64_t A,
                          int64_t B, int64_t width, cudaStream_t st) {
  if (A <= 0 || B <= 0 || width <= 0) return cudaSuccess;
  const uint64_t bits = reinterpret_cast<uintptr_t>(src) | reinterpret_cast<uintptr_t>(dst) | uint64_t(sa) |
                        uint64_t(sb) | uint64_t(da) | uint64_t(db) | uint64_t(width);
  if (bits % 16 == 0) return detail::launch<uint4>(src, sa, sb, dst, da, db, A, B, width, st);
  if (bits % 8 == 0) return detail::launch<uint2>(src, sa, sb, dst, da, db, A, B, width, st);
  if (bits % 4 == 0) return detail::launch<unsigned>(src, sa, sb, dst, da, db, A, B, width, st);
  if (bits % 2 == 0) return detail::launch<unsigned short>(src, sa, sb, dst, da, db, A, B, width, st);
  return detail::launch<unsigned char>(src, sa, sb, dst, da, db, A, B, width, st);
}

// The all-to-all: `count` elements at send + p * send_stride go to rank p, and rank p's
// chunk for this rank lands at recv + p * recv_stride (bytes); one NCCL group of sends and
// receives, this rank's own chunk included (NCCL copies it locally).
inline int exchange(mgk_ctx* ctx, const void* send, size_t send_stride, void* recv, size_t recv_stride, size_t count,
                    mgk_dtype dtype, cudaStream_t st) {
  const ncclDataType_t t = mgk::nccl_type(dtype);
  MGK_NCCL_STEP(ctx, ncclGroupStart());
  for (int p = 0; p < ctx->world_size; ++p) {
    MGK_NCCL_STEP(ctx, ncclSend(static_cast<const char*>(send) + p * send_stride, count, t, p, mgk::comm(ctx), st));
    MGK_NCCL_STEP(ctx, ncclRecv(static_cast<char*>(recv) + p * recv_stride, count, t, p, mgk::comm(ctx), st));
  }
  MGK_NCCL_STEP(ctx, ncclGroupEnd());
  return 0;
}

// A chunk's slot in a staging buffer: its bytes rounded up to 256, so every slot is as
// aligned as cudaMalloc's memory.
inline size_t slot_bytes(size_t bytes) { return (bytes + 255) / 256 * 256; }

// The staging of an exchange that packs before it and unpacks after it: W send slots and W
// receive slots of `slot` bytes each (one chunk, rounded up by slot_bytes).
struct Staging {
  void* send = nullptr;
  void* recv = nullptr;
  size_t slot = 0;
  Staging() = default;
  Staging(const Staging&) = delete;
  Staging& operator=(const Staging&) = delete;
  ~Staging() {
    cudaFree(send);
    cudaFree(recv);
  }
  cudaError_t allocate(int world, size_t chunk_bytes) {
    slot = slot_bytes(chunk_bytes);
    cudaError_t e = cudaMalloc(&send, slot * world);
    return e != cudaSuccess ? e : cudaMalloc(&recv, slot * world);
  }
};

// The base of the references that pack before the exchange and unpack after it: their
// staging, and the exchange of its slots.
struct StagedReference : mgk::Reference {
  using Reference::Reference;
  Staging staging;

 protected:
  // A chunk is tensor t's bytes over W (t: the tensor the exchange splits).
  int allocate_staging(const mgk_tensor& t) {
    MGK_CUDA_TRY(ctx, staging.allocate(world(), size_t(t.numel / world()) * mgk::dtype_size(t.dtype)));
    return 0;
  }

  // Send slot p to rank p, rank p's chunk into receive slot p: `count` elements each.
  int exchange(size_t count, mgk_dtype dtype, cudaStream_t st) {
    return sp::exchange(ctx, staging.send, staging.slot, staging.recv, staging.slot, count, dtype, st);
  }
};

}  // namespace sp
