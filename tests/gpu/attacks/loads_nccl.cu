// ATTACK: load NCCL into the candidate process at run time.
// Flaw aimed at: the candidate may not call NCCL (the task is to replace it), and its
// imports and source say so; but libc's dlopen, found in memory, loads whatever library the
// process can open, and the system's libraries are in its root. In mgk_setup the attack
// dlopens libnccl.so.2 (then libnccl.so) and looks up ncclGetVersion. If NCCL loads, every
// mgk_run writes zeros, so that a root that lets NCCL through shows as a wrong answer.
// Expected verdict: correct, its stderr saying each name is "not loadable" (the candidate's
// root masks the NCCL and NVSHMEM libraries: an open of them fails).
#include <dlfcn.h>

#include "../candidates/simple_common.cuh"
#include "in_memory.cuh"

namespace {
bool g_loaded = false;
}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  using dlopen_fn = void* (*)(const char*, int);
  using dlsym_fn = void* (*)(void*, const char*);
  using dlerror_fn = char* (*)();
  const auto dlopen_ = inmem::libc_fn<dlopen_fn>("dlopen");
  const auto dlsym_ = inmem::libc_fn<dlsym_fn>("dlsym");
  const auto dlerror_ = inmem::libc_fn<dlerror_fn>("dlerror");
  if (!dlopen_ || !dlsym_ || !dlerror_) return inmem::not_mounted(ctx, "libc's dlopen, dlsym or dlerror was not found");
  for (const char* name : {"libnccl.so.2", "libnccl.so"}) {
    void* h = dlopen_(name, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char* why = dlerror_();
      ATTACK_SAY("%s: not loadable (%s)", name, why ? why : "?");
      continue;
    }
    g_loaded = true;
    ATTACK_SAY("%s: LOADED, ncclGetVersion at %p", name, dlsym_(h, "ncclGetVersion"));
  }
  return simple::setup(ctx);
}
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { simple::teardown(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  return inmem::all_reduce_or_zeros(ctx, in, out, s, g_loaded);
}
