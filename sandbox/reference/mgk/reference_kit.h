// The reference kit: what every reference is made of, written once. A reference is a struct
// derived from mgk::Reference that declares what it reads and owns and says what it computes:
//
//   struct GemmAllReduce : mgk::Reference {
//     using Reference::Reference;
//     const int64_t M = dim("M"), N = dim("N"), K = dim("K");  // the dims it reads, once
//     mgk::lt::Handle lt;                                       // the library plans it owns
//     mgk::lt::Gemm gemm;
//     mgk::DeviceBuffer<float> sums;                            // its workspace
//     mgk::SplitComm tp;                                        // streams, events, sub-groups
//     int setup();                                              // optional: plans, allocations
//     int run(const mgk_tensor* in, const mgk_tensor* out, cudaStream_t st);
//     int oracle(const mgk_oracle_args* a, cudaStream_t st);
//   };
//   MGK_REFERENCE(GemmAllReduce)
//
// MGK_REFERENCE exports the solution ABI over it: mgk_setup constructs it (a dim the
// problem's spec lacks fails the set-up, naming the dim) and calls setup(); mgk_teardown
// destroys it, so whatever it owns (buffers, plans, handles) is freed by its destructor;
// mgk_run and mgk_oracle call run and oracle. The members keep the ABI's names (`ctx`, and
// MGK_CUDA_TRY(ctx, ...) and its kin work unchanged inside them).
#pragma once
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "mgk/oracle_gemm.cuh"
#include "mgk/reference.h"

// A `[=] __device__` lambda inside a member (run, oracle) that names another member captures
// `this`, a host pointer the GPU cannot follow. Copy the member into a local first: this
// pragma makes the mistake a compile error instead of a fault (or, with HMM, a slow read of
// host memory) on the device.
#pragma nv_diag_error 2908

namespace mgk {

// Device memory a reference owns, freed with it. Not copyable; reads as a T*.
template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { cudaFree(p_); }

  // n elements (any previous allocation freed first). Uninitialised, as cudaMalloc leaves it.
  cudaError_t allocate(int64_t n) {
    cudaFree(p_);
    p_ = nullptr;
    return cudaMalloc(&p_, size_t(n) * sizeof(T));
  }
  T* get() const { return p_; }
  operator T*() const { return p_; }

 private:
  T* p_ = nullptr;
};

// A handle (a stream, an event, a communicator split from the harness's) destroyed by
// `Destroy` with its owner; null until a creating call writes it through out(). Reads as the
// handle.
template <class H, auto Destroy>
class Owned {
 public:
  Owned() = default;
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
  ~Owned() {
    if (h_) Destroy(h_);
  }

  H* out() { return &h_; }
  operator H() const { return h_; }

 private:
  H h_ = nullptr;
};

// Tensors 0, 1, ... of `t` as typed pointers, for a structured binding:
//   const auto [table, ids] = mgk::tensor_data<const __nv_bfloat16, const int64_t>(in);
template <class... T>
std::tuple<T*...> tensor_data(const mgk_tensor* t) {
  return [t]<size_t... I>(std::index_sequence<I...>) {
    return std::tuple<T*...>{static_cast<T*>(t[I].data)...};
  }(std::index_sequence_for<T...>{});
}

// An oracle's output `o`: where its expected values go (double, or int64 for an exact
// integer output) and its per-element scale (null for an output compared exactly).
//   const auto [expected, scale] = mgk::oracle_output(a, 0);
template <class T = double>
std::tuple<T*, float*> oracle_output(const mgk_oracle_args* a, int o) {
  return {static_cast<T*>(a->expected[o]), a->scale[o]};
}

// The counts of a variable-size all-to-all, exchanged and read by the host (the payload's
// sizes decide the host's NCCL calls). `counts` is 2 W int64 on the device: [0, W) what this
// rank sends each rank (filled by the caller), [W, 2 W) what each rank sends it, filled here
// (the own count by a device copy); `host` (2 W) gets both once the stream has them.
inline int exchange_counts(mgk_ctx* ctx, ncclComm_t comm, int64_t* counts, std::vector<int64_t>& host,
                           cudaStream_t st) {
  const int W = ctx->world_size, r = ctx->rank;
  MGK_CUDA_TRY(ctx, cudaMemcpyAsync(counts + W + r, counts + r, 8, cudaMemcpyDeviceToDevice, st));
  MGK_NCCL_TRY(ctx, ncclGroupStart());
  for (int p = 0; p < W; ++p) {
    if (p == r) continue;
    MGK_NCCL_TRY(ctx, ncclSend(counts + p, 1, ncclInt64, p, comm, st));
    MGK_NCCL_TRY(ctx, ncclRecv(counts + W + p, 1, ncclInt64, p, comm, st));
  }
  MGK_NCCL_TRY(ctx, ncclGroupEnd());
  host.resize(2 * W);
  MGK_CUDA_TRY(ctx, cudaMemcpyAsync(host.data(), counts, size_t(2 * W) * 8, cudaMemcpyDeviceToHost, st));
  MGK_CUDA_TRY(ctx, cudaStreamSynchronize(st));
  return 0;
}

// Where each of `n` blocks of these sizes starts, and (at n) their total.
inline std::vector<int64_t> exclusive_offsets(const int64_t* sizes, int n) {
  std::vector<int64_t> at(n + 1, 0);
  for (int p = 0; p < n; ++p) at[p + 1] = at[p] + sizes[p];
  return at;
}

// A variable-size all-to-all's blocks, once every side knows their sizes (exchange_sizes).
struct ExchangeSizes {
  const int64_t* sent = nullptr;          // W: the units this rank sends each rank
  const int64_t* got = nullptr;           // W: the units each rank sends this rank
  std::vector<int64_t> send_at, recv_at;  // W + 1 each: where each block starts, then the total
};

// exchange_counts (into `host`, where `sent` and `got` then point), then each block's start;
// fails, the sizes in ctx->error, when this rank would send more than `sending` units or
// receive more than `capacity`: what its buffers hold.
inline int exchange_sizes(mgk_ctx* ctx, ncclComm_t comm, int64_t* counts, std::vector<int64_t>& host,
                          int64_t sending, int64_t capacity, ExchangeSizes& x, cudaStream_t st) {
  if (int rc = exchange_counts(ctx, comm, counts, host, st)) return rc;
  const int W = ctx->world_size;
  x.sent = host.data(), x.got = host.data() + W;
  x.send_at = exclusive_offsets(x.sent, W), x.recv_at = exclusive_offsets(x.got, W);
  if (x.send_at[W] > sending || x.recv_at[W] > capacity)
    return set_error(ctx, "all-to-all sizes: %lld units to send where at most %lld are, %lld to receive into room for %lld",
                     (long long)x.send_at[W], (long long)sending, (long long)x.recv_at[W], (long long)capacity);
  return 0;
}

// The payload of a variable-size all-to-all, one NCCL group: this rank's block for rank p
// (sent[p] units from unit send_at[p] of `send`) to p, and p's block for this rank into `recv`
// (got[p] units at recv_at[p]); its own block by a device copy. A unit is `unit_bytes` (8 for
// an int64 id, 2 D for a row of D bf16). A zero count is no message on either side: both know
// it from exchange_counts.
inline int exchange_blocks(mgk_ctx* ctx, ncclComm_t comm, const void* send, const int64_t* sent,
                           const int64_t* send_at, void* recv, const int64_t* got, const int64_t* recv_at,
                           size_t unit_bytes, cudaStream_t st) {
  const int W = ctx->world_size, r = ctx->rank;
  const auto* from = static_cast<const char*>(send);
  auto* to = static_cast<char*>(recv);
  if (sent[r] > 0)
    MGK_CUDA_TRY(ctx, cudaMemcpyAsync(to + recv_at[r] * unit_bytes, from + send_at[r] * unit_bytes,
                                      size_t(sent[r]) * unit_bytes, cudaMemcpyDeviceToDevice, st));
  MGK_NCCL_TRY(ctx, ncclGroupStart());
  for (int p = 0; p < W; ++p) {
    if (p == r) continue;
    if (sent[p] > 0)
      MGK_NCCL_TRY(ctx, ncclSend(from + send_at[p] * unit_bytes, size_t(sent[p]) * unit_bytes, ncclUint8, p, comm, st));
    if (got[p] > 0)
      MGK_NCCL_TRY(ctx, ncclRecv(to + recv_at[p] * unit_bytes, size_t(got[p]) * unit_bytes, ncclUint8, p, comm, st));
  }
  MGK_NCCL_TRY(ctx, ncclGroupEnd());
  return 0;
}

using Stream = Owned<cudaStream_t, cudaStreamDestroy>;
using Event = Owned<cudaEvent_t, cudaEventDestroy>;
using SplitComm = Owned<ncclComm_t, ncclCommDestroy>;  // null when timed without communication

// The base of every reference: the context and the dims it reads.
class Reference {
 public:
  explicit Reference(mgk_ctx* context) : ctx(context) {}
  Reference(const Reference&) = delete;
  Reference& operator=(const Reference&) = delete;

  // False when a dim read by name is not in the problem's spec (ctx->error names it).
  bool dims_known() const { return dims_known_; }

 protected:
  // The value of dim `name` in this size preset. A name the spec lacks gives -1 and fails
  // the set-up, so a misspelt dim is caught before any call.
  int64_t dim(const char* name) {
    for (int i = 0; i < ctx->num_dims; ++i)
      if (std::strcmp(ctx->dim_names[i], name) == 0) return ctx->dim_values[i];
    if (dims_known_) set_error(ctx, "the reference reads a dim '%s' that the problem's spec does not define", name);
    dims_known_ = false;
    return -1;
  }

  int rank() const { return ctx->rank; }
  int world() const { return ctx->world_size; }
  ncclComm_t comm() const { return mgk::comm(ctx); }

  // The oracle's cuBLAS handle on `s`, or nullptr with ctx->error set.
  cublasHandle_t oracle_blas(cudaStream_t s) { return oracle::blas_on(ctx, blas, s); }

  mgk_ctx* const ctx;
  oracle::Blas blas;  // the oracle's cuBLAS, made on first use, destroyed with the reference

 private:
  bool dims_known_ = true;
};

namespace kit {

template <class R>
R& of(mgk_ctx* ctx) {
  return *static_cast<R*>(ctx->state);
}

template <class R>
int setup(mgk_ctx* ctx) {
  static_assert(std::is_base_of_v<Reference, R>, "MGK_REFERENCE(R): R must derive from mgk::Reference");
  auto* r = new R(ctx);
  ctx->state = r;  // set before anything can fail: teardown frees what setup got
  if (!r->dims_known()) return 1;
  if constexpr (requires { r->setup(); }) return r->setup();
  return 0;
}

template <class R>
void teardown(mgk_ctx* ctx) {
  delete static_cast<R*>(ctx->state);
  ctx->state = nullptr;
}

}  // namespace kit
}  // namespace mgk

// Exports the solution ABI (mgk_setup, mgk_run, mgk_teardown, mgk_oracle) over reference R.
#define MGK_REFERENCE(R)                                                                                         \
  MGK_EXPORT int mgk_setup(mgk_ctx* ctx) { return ::mgk::kit::setup<R>(ctx); }                                   \
  MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { ::mgk::kit::teardown<R>(ctx); }                                   \
  MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t st) { \
    return ::mgk::kit::of<R>(ctx).run(in, out, st);                                                              \
  }                                                                                                              \
  MGK_EXPORT int mgk_oracle(mgk_ctx* ctx, const mgk_oracle_args* a, cudaStream_t st) {                           \
    return ::mgk::kit::of<R>(ctx).oracle(a, st);                                                                 \
  }
