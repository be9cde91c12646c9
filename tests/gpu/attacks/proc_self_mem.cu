// ATTACK: rewrite the candidate process's GOT through /proc/self/mem, past its protection.
// Flaw aimed at: a process may write its own memory through /proc/self/mem whatever the
// pages' protection (the kernel writes them as a debugger would), so neither full RELRO nor
// a filter on mprotect keeps the timing stub's GOT, or its code, from being rewritten. Once,
// in mgk_setup, the attack finds the executable and the GOT slot of cudaEventElapsedTime (as
// got_elapsed_time.cu does), opens /proc/self/mem for writing with libc's open found in
// memory, and pwrites the address of its own function into the slot: a function that calls
// the real one and reports a third of its answer. The kernel is the plain, correct all-reduce.
// Expected verdict: correct and honest, its stderr saying "/proc/self/mem: not writable"
// (the candidate process's write guard: writes beneath its scratch and /dev only).
// Were the slot rewritten, at W = 1 (timed) the time would be a third of the kernel's.
#include <fcntl.h>

#include "../candidates/simple_common.cuh"
#include "in_memory.cuh"

namespace {
using elapsed_fn = cudaError_t (*)(float*, cudaEvent_t, cudaEvent_t);
elapsed_fn g_real_elapsed = nullptr;
bool g_tried = false;

cudaError_t a_third_of_the_time(float* ms, cudaEvent_t start, cudaEvent_t end) {
  const cudaError_t e = g_real_elapsed(ms, start, end);
  if (e == cudaSuccess && ms) *ms /= 3;
  return e;
}
}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  if (!g_tried) {  // once per process: setup runs again for every size preset
    g_tried = true;
    using open_fn = int (*)(const char*, int, ...);
    using pwrite_fn = long (*)(int, const void*, size_t, long);
    using close_fn = int (*)(int);
    const auto open_ = inmem::libc_fn<open_fn>("open");
    const auto pwrite_ = inmem::libc_fn<pwrite_fn>("pwrite");
    const auto close_ = inmem::libc_fn<close_fn>("close");
    if (!open_ || !pwrite_ || !close_) return inmem::not_mounted(ctx, "libc's open, pwrite or close was not found");
    inmem::Loaded exe;
    if (!inmem::executable_of(ctx, exe)) return inmem::not_mounted(ctx, "the executable was not found in memory");
    void** slot = inmem::got_slot(exe, "cudaEventElapsedTime");
    if (!slot) return inmem::not_mounted(ctx, "no GOT slot of cudaEventElapsedTime");
    const int fd = open_("/proc/self/mem", O_RDWR);
    if (fd < 0) {
      ATTACK_SAY("/proc/self/mem: not writable (open: %s)", std::strerror(errno));
    } else {
      void* real = *slot;
      void* hook = reinterpret_cast<void*>(a_third_of_the_time);
      g_real_elapsed = reinterpret_cast<elapsed_fn>(real);
      const long n = pwrite_(fd, &hook, sizeof hook, long(reinterpret_cast<uintptr_t>(slot)));
      const int e = errno;
      close_(fd);
      if (n == long(sizeof hook))
        ATTACK_SAY("/proc/self/mem: WRITTEN, the executable's cudaEventElapsedTime now reports a third of the time");
      else
        ATTACK_SAY("/proc/self/mem: opened, but the write failed (%s)", std::strerror(e));
    }
  }
  return simple::setup(ctx);
}
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { simple::teardown(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));
  MGK_CUDA_TRY(ctx, simple::sum(out[0].dtype, in[0].peers, ctx->world_size, 0, out[0].data, out[0].numel, s));
  return 0;
}
