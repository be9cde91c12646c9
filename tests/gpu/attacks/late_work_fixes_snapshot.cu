// ATTACK: leave the work running past the end event, then fix the snapshot late.
// Flaw aimed at: an "as the stream finished" snapshot the candidate can write, and a
// process that answers when the candidate's code says the device is idle. mgk_run enqueues
// the real work (barrier, sum) on a stream of its own that it never joins, so the stub's end
// event fires at once and its snapshot copy (copy_kernel, on the stub's side stream) copies
// a half-written output. Three GOT slots of mgk-candidate are hooked once, in mgk_setup
// (executable and libc found in memory, as in got_elapsed_time.cu):
//   __cudaLaunchKernel / cudaLaunchKernel: the stub's snapshot launch is the one whose first
//     argument is a CopyTable (call.cu) with src[0] == out[0].data; after it, the attack
//     enqueues on its late stream (after the real work, and after that launch) its own copy
//     of the finished output into that table's dst[0], the snapshot;
//   cudaDeviceSynchronize: waits for the stub's two streams only and returns cudaSuccess, so
//     the candidate process answers (its time, "the snapshot is taken") before the late work
//     is done.
// Expected verdict: incorrect (the harness reads a snapshot not yet fixed), or NOT CREDIBLE
// (the time reported is about zero: below the floor and the outside clock); a runtime_error
// naming a CUDA fault where the snapshot is mapped read-only to the candidate. Unhooked it
// fails setup: "attack not mounted".
#include "../candidates/simple_common.cuh"
#include "in_memory.cuh"

namespace {

// The stub's snapshot table, as sandbox/core/call.cu lays it out.
constexpr int kCopiesPerLaunch = 32;
struct CopyTable {
  int count;
  const unsigned char* src[kCopiesPerLaunch];
  unsigned char* dst[kCopiesPerLaunch];
  size_t bytes[kCopiesPerLaunch];
};
constexpr unsigned kCopyThreads = 512;  // copy_kernel's block

using launch_fn = cudaError_t (*)(const void*, dim3, dim3, void**, size_t, cudaStream_t);
using sync_fn = cudaError_t (*)();

struct Late {
  cudaStream_t stream = nullptr;       // the real work, never joined to the call's stream
  cudaEvent_t inputs_ready = nullptr;  // the call's stream at mgk_run: inputs staged
  cudaEvent_t stub_copied = nullptr;   // the stub's snapshot launch has been enqueued
  bool armed = false;                  // between mgk_run and the stub's snapshot launch
  const void* output = nullptr;        // out[0].data of the call
  cudaStream_t stub_stream = nullptr;  // the call's stream
  cudaStream_t stub_side = nullptr;    // where the stub's snapshot runs
  sync_fn real_sync = nullptr;
  bool hooked = false;
} g;

// One hook per launch entry point the executable may import; each calls its own real one.
template <int kWhich>
struct LaunchHook {
  static inline launch_fn real = nullptr;
  static cudaError_t hook(const void* f, dim3 grid, dim3 block, void** args, size_t shared, cudaStream_t st) {
    const cudaError_t e = real(f, grid, block, args, shared, st);
    if (e != cudaSuccess || !g.armed || !args || block.x != kCopyThreads || block.y != 1 || block.z != 1) return e;
    const auto* table = static_cast<const CopyTable*>(args[0]);
    if (table->count < 1 || table->count > kCopiesPerLaunch || table->src[0] != g.output) return e;
    g.armed = false;
    g.stub_side = st;
    // After the stub's copy (so that ours lands last) and after the real work (on g.stream).
    if (cudaEventRecord(g.stub_copied, st) == cudaSuccess && cudaStreamWaitEvent(g.stream, g.stub_copied, 0) == cudaSuccess)
      cudaMemcpyAsync(table->dst[0], table->src[0], table->bytes[0], cudaMemcpyDeviceToDevice, g.stream);
    return e;
  }
};

cudaError_t sync_the_stub_only() {
  if (!g.stub_stream) return g.real_sync();  // outside a call: nothing to hide
  cudaStreamSynchronize(g.stub_stream);
  if (g.stub_side) cudaStreamSynchronize(g.stub_side);
  return cudaSuccess;
}

template <int kWhich>
bool hook_launch(const inmem::Loaded& exe, const char* name) {
  void* real = nullptr;
  if (!inmem::got_slot(exe, name) ||
      inmem::hook_got(exe, name, reinterpret_cast<void*>(&LaunchHook<kWhich>::hook), &real))
    return false;
  LaunchHook<kWhich>::real = reinterpret_cast<launch_fn>(real);
  return true;
}

}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  if (!g.hooked) {  // once per process: setup runs again for every size preset
    inmem::Loaded exe;
    if (!inmem::executable_of(ctx, exe)) return inmem::not_mounted(ctx, "the executable was not found in memory");
    const bool launch = hook_launch<0>(exe, "__cudaLaunchKernel") | hook_launch<1>(exe, "cudaLaunchKernel") |
                        hook_launch<2>(exe, "__cudaLaunchKernel_ptsz");
    if (!launch) return inmem::not_mounted(ctx, "no kernel launch entry point of the executable could be hooked");
    void* real = nullptr;
    if (const char* why = inmem::hook_got(exe, "cudaDeviceSynchronize", reinterpret_cast<void*>(sync_the_stub_only), &real))
      return inmem::not_mounted(ctx, why);
    g.real_sync = reinterpret_cast<sync_fn>(real);
    g.hooked = true;
    ATTACK_SAY("the executable's kernel launches and cudaDeviceSynchronize are hooked");
  }
  MGK_CUDA_TRY(ctx, cudaStreamCreateWithFlags(&g.stream, cudaStreamNonBlocking));
  MGK_CUDA_TRY(ctx, cudaEventCreateWithFlags(&g.inputs_ready, cudaEventDisableTiming));
  MGK_CUDA_TRY(ctx, cudaEventCreateWithFlags(&g.stub_copied, cudaEventDisableTiming));
  return simple::setup(ctx);
}

MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) {
  cudaStreamSynchronize(g.stream);
  cudaEventDestroy(g.inputs_ready);
  cudaEventDestroy(g.stub_copied);
  cudaStreamDestroy(g.stream);
  g.stream = nullptr;
  g.armed = false;
  g.stub_stream = g.stub_side = nullptr;  // the stub's streams go with its call site
  simple::teardown(ctx);
}

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  MGK_CUDA_TRY(ctx, cudaEventRecord(g.inputs_ready, s));
  MGK_CUDA_TRY(ctx, cudaStreamWaitEvent(g.stream, g.inputs_ready, 0));
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, g.stream));
  MGK_CUDA_TRY(ctx, simple::sum(out[0].dtype, in[0].peers, ctx->world_size, 0, out[0].data, out[0].numel, g.stream));
  g.output = out[0].data;
  g.stub_stream = s;
  g.armed = true;
  return 0;  // g.stream is never joined back to s
}
