// The copy engine: host-issued cudaMemcpyAsync between UVA pointers, one of which may be a
// peer's memory (symmetric buffers' host_peers). No SM is used, so it runs beside compute
// kernels, and it reaches the highest peer bandwidth for large messages (device notes:
// ~396 GB/s one way on the H200 pair vs ~365 for SM stores), but every call costs host
// launch overhead (a few microseconds) and the device cannot see its progress: order it
// with stream order and put the cross-GPU signals in small kernels before and after.
#pragma once
#include "../common/base.cuh"

namespace mgk::prim {

// Side streams for copies issued in parallel (several copy engines), forked from and
// joined back into the caller's stream. Create in mgk_setup, destroy in mgk_teardown.
struct ce_streams {
  static constexpr int kMax = 8;
  cudaStream_t side[kMax] = {};
  cudaEvent_t fork = nullptr;
  cudaEvent_t join[kMax] = {};
  int count = 0;
  int next = 0;  // round-robin position within the current batch
};

// count = 0 is valid: copies then run on the caller's stream.
inline cudaError_t ce_create(ce_streams* s, int count) {
  if (count < 0 || count > ce_streams::kMax) return cudaErrorInvalidValue;
  s->count = count;
  cudaError_t e = cudaEventCreateWithFlags(&s->fork, cudaEventDisableTiming);
  for (int i = 0; e == cudaSuccess && i < count; ++i) {
    e = cudaStreamCreateWithFlags(&s->side[i], cudaStreamNonBlocking);
    if (e == cudaSuccess) e = cudaEventCreateWithFlags(&s->join[i], cudaEventDisableTiming);
  }
  return e;
}

inline void ce_destroy(ce_streams* s) {
  for (int i = 0; i < s->count; ++i) {
    if (s->side[i]) cudaStreamDestroy(s->side[i]);
    if (s->join[i]) cudaEventDestroy(s->join[i]);
  }
  if (s->fork) cudaEventDestroy(s->fork);
  *s = ce_streams{};
}

// One copy of `bytes` bytes; dst and src are any device pointers (local or peer).
inline cudaError_t ce_copy(void* dst, const void* src, size_t bytes, cudaStream_t stream) {
  return bytes ? cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream) : cudaSuccess;
}

// Starts a batch: the side streams wait for everything enqueued on `stream` so far.
inline cudaError_t ce_begin(ce_streams* s, cudaStream_t stream) {
  s->next = 0;
  if (s->count == 0) return cudaSuccess;
  cudaError_t e = cudaEventRecord(s->fork, stream);
  for (int i = 0; e == cudaSuccess && i < s->count; ++i) e = cudaStreamWaitEvent(s->side[i], s->fork, 0);
  return e;
}

// Adds a copy to the batch, cut into `pieces` parts spread round-robin over the side
// streams (pieces > 1 lets several copy engines share one large transfer).
inline cudaError_t ce_add(ce_streams* s, cudaStream_t stream, void* dst, const void* src, size_t bytes,
                          int pieces = 1) {
  if (pieces < 1) pieces = 1;
  for (int p = 0; p < pieces; ++p) {
    const size_t begin = bytes * size_t(p) / size_t(pieces) / 16 * 16;
    const size_t end = p + 1 == pieces ? bytes : bytes * size_t(p + 1) / size_t(pieces) / 16 * 16;
    cudaStream_t on = s->count ? s->side[s->next++ % s->count] : stream;
    cudaError_t e = ce_copy(static_cast<char*>(dst) + begin, static_cast<const char*>(src) + begin, end - begin, on);
    if (e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

// Ends the batch: `stream` waits for every copy of it (so the copies are complete on
// `stream`, as the ABI requires of everything mgk_run enqueues).
inline cudaError_t ce_end(ce_streams* s, cudaStream_t stream) {
  cudaError_t e = cudaSuccess;
  for (int i = 0; e == cudaSuccess && i < s->count; ++i) {
    e = cudaEventRecord(s->join[i], s->side[i]);
    if (e == cudaSuccess) e = cudaStreamWaitEvent(stream, s->join[i], 0);
  }
  return e;
}

}  // namespace mgk::prim
