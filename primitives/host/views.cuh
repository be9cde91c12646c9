// Host-side helpers that turn the ABI's objects (mgk_ctx, mgk_sym_buffer, mgk_tensor) into
// device views, allocate symmetric memory, and agree on a value across ranks at setup.
// All return 0 on success and, on failure, a non-zero code with ctx->error set, like the
// ABI's own functions; call them from mgk_setup / mgk_run.
#pragma once
#include "../memory/sym_view.cuh"

namespace mgk::prim {

// A view of a symmetric buffer allocated with ctx->sym_alloc.
template <class T>
inline sym_view<T> view_of(const mgk_ctx* ctx, const mgk_sym_buffer& b) {
  return sym_view<T>{b.peers, static_cast<T*>(b.local), 0, ctx->rank, ctx->world_size};
}

// A view of a symmetric tensor. Fails (ctx->error set) when the tensor is not symmetric.
template <class T>
inline int view_of(mgk_ctx* ctx, const mgk_tensor& t, sym_view<T>* out) {
  if (!t.peers)
    return mgk::set_error(ctx, "tensor '%s' is not symmetric: it has no peer pointers", t.name);
  *out = sym_view<T>{t.peers, static_cast<T*>(t.data), 0, ctx->rank, ctx->world_size};
  return 0;
}

// ctx->sym_alloc with a message that says what the memory was for. Collective: every rank
// must call it with the same bytes, in the same order. The memory is zero-filled.
inline int sym_alloc(mgk_ctx* ctx, size_t bytes, const char* what, mgk_sym_buffer* out) {
  if (ctx->sym_alloc(ctx, bytes, out) != 0) {
    char inner[MGK_ERROR_CAPACITY];
    snprintf(inner, sizeof inner, "%s", ctx->error);
    return mgk::set_error(ctx, "allocating %zu symmetric bytes for %s: %s", bytes, what, inner);
  }
  return 0;
}

namespace detail {
template <int = 0>
__global__ void min_over_ranks_kernel(void* const* peers, int world, int64_t* out) {
  if (threadIdx.x != 0) return;
  int64_t m = INT64_MAX;
  for (int r = 0; r < world; ++r) {
    const int64_t v = *static_cast<const volatile int64_t*>(peers[r]);
    m = v < m ? v : m;
  }
  *out = m;
}
}  // namespace detail

// The minimum of `value` over all ranks, for setup-time decisions that must be identical on
// every rank (grid sizes, chunk counts: a rank that picked a different grid would wait on
// flags nobody sets). Collective, host-blocking, setup only. Uses the first 16 bytes of
// `scratch` (a symmetric buffer of at least 16 bytes that no kernel is using) and leaves
// them zero again.
inline int agree_min(mgk_ctx* ctx, const mgk_sym_buffer& scratch, int64_t value, int64_t* out) {
  if (scratch.bytes < 16) return mgk::set_error(ctx, "agree_min: scratch buffer needs 16 bytes");
  int64_t* slots = static_cast<int64_t*>(scratch.local);  // [0]: my value, [1]: the minimum
  MGK_CUDA_TRY(ctx, cudaMemcpy(slots, &value, sizeof value, cudaMemcpyHostToDevice));
  MGK_CUDA_TRY(ctx, cudaDeviceSynchronize());
  if (ctx->host_barrier(ctx) != 0) return 1;  // every rank's value is written
  detail::min_over_ranks_kernel<<<1, 32>>>(scratch.peers, ctx->world_size, slots + 1);
  MGK_LAUNCH_CHECK(ctx);
  MGK_CUDA_TRY(ctx, cudaMemcpy(out, slots + 1, sizeof *out, cudaMemcpyDeviceToHost));
  if (ctx->host_barrier(ctx) != 0) return 1;  // every rank has read every value
  MGK_CUDA_TRY(ctx, cudaMemset(slots, 0, 16));
  MGK_CUDA_TRY(ctx, cudaDeviceSynchronize());
  return 0;
}

// Bytes of one landing slot of a one-shot push for pieces of `elems` elements of
// `elem_bytes` each (mgk::dtype_size of the setup descriptor's dtype, ctx->inputs), rounded
// up to 16; 0 when that exceeds `limit` (then never take the one-shot path).
inline size_t landing_slot_bytes(int64_t elems, size_t elem_bytes, size_t limit) {
  const size_t bytes = size_t(elems) * elem_bytes;
  return bytes > limit ? 0 : size_t(round_up(int64_t(bytes), 16));
}
// The ABI v1 form, kept so that kernels written before setup knew the dtype still build:
// room for fp32 capped at `limit`, 0 when not even bf16 fits.
inline size_t landing_slot_bytes(int64_t elems, size_t limit) {
  if (size_t(elems) * 2 > limit) return 0;
  const size_t widest = size_t(elems) * 4;
  return size_t(round_up(int64_t(widest < limit ? widest : limit), 16));
}

// How many blocks of `kernel` (with `threads` threads and `smem` dynamic shared bytes) fit
// on the GPU at once. Kernels whose blocks wait on each other (directly or through their
// counterparts on other GPUs) must launch at most this many.
template <class Kernel>
inline int resident_blocks(mgk_ctx* ctx, Kernel kernel, int threads, size_t smem, int* out) {
  int per_sm = 0;
  MGK_CUDA_TRY(ctx, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem));
  if (per_sm < 1)
    return mgk::set_error(ctx, "a kernel with %d threads and %zu bytes of shared memory does not fit on an SM",
                          threads, smem);
  *out = per_sm * ctx->num_sms;
  return 0;
}

}  // namespace mgk::prim
