// The solution ABI: what every reference and candidate kernel file implements, and what
// the per-rank harness (sandbox/harness) hands them. Plain C so that any nvcc-compiled
// shared object can implement it.
// mgk-prompt: omit {
//
// The model's prompt quotes this file without the blocks marked "mgk-prompt: omit" (these
// maintainer notes, what only references use): mark so anything a candidate does not need. Bump MGK_ABI_VERSION on any layout change.
// mgk-prompt: omit }
//
// A solution exports, with C linkage:
//   int  mgk_setup(mgk_ctx* ctx);       once per size preset, before any run: allocate
//                                       workspace and symmetric buffers, create streams.
//   int  mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int n_in,
//                const mgk_tensor* out, int n_out, cudaStream_t stream);
//                                       the timed call. All work must be complete on
//                                       `stream` when the stream reaches the end of what
//                                       run() enqueued: work forked to other streams must
//                                       be joined back (cudaStreamWaitEvent) before return.
//                                       Inputs are read-only, except where the problem
//                                       marks an output "in place of" an input: that
//                                       output's data is the input's buffer (the same
//                                       pointer, and peers when symmetric), holding the
//                                       input's values at the call and the updated values
//                                       after it. Every call gets freshly drawn values.
//   void mgk_teardown(mgk_ctx* ctx);    once per size preset, after the last run.
// mgk-prompt: omit {
// A reference additionally exports
//   int  mgk_oracle(mgk_ctx* ctx, const mgk_oracle_args* args, cudaStream_t stream);
//                                       the high-precision expected outputs (see below).
// mgk-prompt: omit }
// Non-zero return = failure; put a message in ctx->error first (mgk::set_error of mgk/solution.h helps).
// mgk-prompt: omit {
#pragma once
// mgk-prompt: omit }
#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdint.h>

// mgk_dtype (mgk/dtype.h): MGK_BF16, MGK_F16, MGK_F32, MGK_F64, MGK_I32, MGK_I64, MGK_U8,
// MGK_E4M3 (float8_e4m3fn: __nv_fp8_e4m3 of cuda_fp8.h, finite only, max 448) and MGK_E5M2
// (__nv_fp8_e5m2); fp8 elements are one byte each.
#include "mgk/dtype.h"

#define MGK_ABI_VERSION 2
#define MGK_MAX_WORLD 72
#define MGK_MAX_RANK_DIMS 8
#define MGK_ERROR_CAPACITY 1024

#ifdef __cplusplus
extern "C" {
#endif

// One tensor as this rank sees it. Shapes may differ between ranks (a root's buffer).
typedef struct mgk_tensor {
  const char* name;
  mgk_dtype dtype;
  int ndim;
  int64_t shape[MGK_MAX_RANK_DIMS];
  int64_t numel;
  void* data;               // this rank's buffer, device memory
  void* const* peers;       // symmetric tensors: DEVICE array [world] of every rank's buffer
                            // (peers[rank] == data); NULL when the tensor is not symmetric
  void* const* host_peers;  // the same pointers in a host array, NULL when not symmetric
} mgk_tensor;

// A buffer allocated with ctx->sym_alloc: same size on every rank, mapped on every GPU.
typedef struct mgk_sym_buffer {
  void* local;              // this rank's memory
  void* const* peers;       // DEVICE array [world]: peers[r] is rank r's memory, as mapped here
  void* const* host_peers;  // the same pointers in a host array
  size_t bytes;
} mgk_sym_buffer;

typedef struct mgk_ctx mgk_ctx;
struct mgk_ctx {
  int abi_version;
  int rank;
  int world_size;
  int device;               // CUDA ordinal of this rank's GPU (already current)
  int num_sms;
  void* nccl_comm;          // ncclComm_t over the group for references; NULL for candidates
  // The size preset's dims by name (e.g. "N"), plus W (world size).
  int num_dims;
  const char* const* dim_names;
  const int64_t* dim_values;
  // The tensors mgk_run will be given, in the same order, as this rank will see them
  // (name, dtype, shape, numel), with data and peers NULL: to size workspace by dtype at
  // setup. Valid until teardown.
  int num_inputs;
  const mgk_tensor* inputs;
  int num_outputs;
  const mgk_tensor* outputs;
  // Collective: every rank must call it with the same `bytes`, in the same order. The
  // memory is zero-filled and stays mapped until the harness tears the preset down.
  int (*sym_alloc)(mgk_ctx* ctx, size_t bytes, mgk_sym_buffer* out);
  // Collective host barrier across all ranks (not for use inside mgk_run's timed path).
  int (*host_barrier)(mgk_ctx* ctx);
  void* state;              // free for the solution's own use
  void* harness;            // private to the harness
  char error[MGK_ERROR_CAPACITY];
};

// mgk-prompt: omit {
// How the harness generated input `t` on every rank: an oracle can regenerate any rank's
// element with mgk_gen_value (gen.cuh) without communication.
typedef enum mgk_dist { MGK_DIST_NORMAL = 0, MGK_DIST_UNIFORM = 1, MGK_DIST_RANDINT = 2, MGK_DIST_ZIPF = 3 } mgk_dist;
typedef struct mgk_input_gen {
  uint64_t seed;            // drawn fresh per trial; mixed with rank and element index
  mgk_dist dist;
  double a, b;              // normal: mean, std; uniform: [a, b); randint, zipf: [a, b)
  mgk_dtype dtype;          // values are rounded to this dtype, as stored
  // Special rows, so that inputs reach a kernel's safeguards (an all-zero row or block, a
  // row whose mean square is below a norm's epsilon). The tensor is read as rows of `row`
  // elements (flat element i lies in row i / row); the same rows on every rank (a sum over
  // ranks of zero rows is zero), shifted by a phase drawn from `seed`, so fresh each trial.
  // With q = i / row + phase: q % zero_every == 0 makes the row exactly +0; otherwise
  // q % tiny_every == tiny_every / 2 multiplies its drawn values by `tiny` (before the
  // rounding to dtype); otherwise q % massive_every == massive_every - 1 multiplies them by
  // `massive` (> 1: a token with massive activations, as LLMs have, which overflows an exp
  // taken without the max). 0 (the default) for none; each period needs row > 0.
  int64_t row;
  int64_t zero_every;
  int64_t tiny_every;
  double tiny;
  int64_t massive_every;
  double massive;
  double exponent;          // zipf: P(a + j) falls as (j + 1) ** -exponent (the ids real
                            // graphs and recommenders see: a few hot, a long cold tail)
} mgk_input_gen;

// Expected outputs for this rank. For float outputs `expected[o]` is a double array; for
// integer outputs an int64 array (same element count as the rank's output). When the
// problem's tolerance for that output is a rounding bound, `scale[o]` (float array) gets
// the magnitude the rounding error scales with (for a sum: the sum of |terms|); it is NULL
// for outputs compared exactly.
typedef struct mgk_oracle_args {
  const mgk_tensor* inputs;   // shapes; data is NULL for an input updated in place (its
                              // buffer holds the call's result): regenerate from gens
  int n_in;
  const mgk_input_gen* gens;  // [n_in]
  const mgk_tensor* outputs;  // shapes only: data is NULL
  int n_out;
  void* const* expected;      // [n_out]
  float* const* scale;        // [n_out], entries may be NULL
} mgk_oracle_args;

typedef int (*mgk_setup_fn)(mgk_ctx*);
typedef int (*mgk_run_fn)(mgk_ctx*, const mgk_tensor*, int, const mgk_tensor*, int, cudaStream_t);
typedef void (*mgk_teardown_fn)(mgk_ctx*);
typedef int (*mgk_oracle_fn)(mgk_ctx*, const mgk_oracle_args*, cudaStream_t);
// mgk-prompt: omit }

#ifdef __cplusplus
}  // extern "C"
#endif
