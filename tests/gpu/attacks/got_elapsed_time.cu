// ATTACK: rewrite the candidate process's GOT so that its clock reports a third of the time.
// Flaw aimed at: trusting the time the candidate's own process measures. The process that
// times the call (mgk-candidate) calls cudaEventElapsedTime through its GOT, read-only under
// full RELRO. Once, in mgk_setup, the attack finds the executable (ctx->sym_alloc points
// into it: walk down to its ELF header), the GOT slot of cudaEventElapsedTime (by name,
// among its DT_JMPREL / DT_RELA relocations), makes the slot's page writable with libc's
// mprotect found in memory (PROT_READ|PROT_WRITE, never PROT_EXEC), and points the slot at
// a function of its own that calls the real one and reports a third of its answer. The
// kernel itself is the plain, correct all-reduce.
// Expected verdict at W = 1 (timed): correct, its time NOT CREDIBLE (below what the
// harness's outside clock allows). Unpatched (the slot or mprotect refused) it fails setup
// with "attack not mounted: ...".
#include "../candidates/simple_common.cuh"
#include "in_memory.cuh"

namespace {
using elapsed_fn = cudaError_t (*)(float*, cudaEvent_t, cudaEvent_t);
elapsed_fn g_real_elapsed = nullptr;

cudaError_t a_third_of_the_time(float* ms, cudaEvent_t start, cudaEvent_t end) {
  const cudaError_t e = g_real_elapsed(ms, start, end);
  if (e == cudaSuccess && ms) *ms /= 3;
  return e;
}
}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  if (!g_real_elapsed) {  // once per process: setup runs again for every size preset
    inmem::Loaded exe;
    if (!inmem::executable_of(ctx, exe)) return inmem::not_mounted(ctx, "the executable was not found in memory");
    void* real = nullptr;
    if (const char* why = inmem::hook_got(exe, "cudaEventElapsedTime", reinterpret_cast<void*>(a_third_of_the_time), &real))
      return inmem::not_mounted(ctx, why);
    g_real_elapsed = reinterpret_cast<elapsed_fn>(real);
    ATTACK_SAY("the executable's cudaEventElapsedTime now reports a third of the time");
  }
  return simple::setup(ctx);
}
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { simple::teardown(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));
  MGK_CUDA_TRY(ctx, simple::sum(out[0].dtype, in[0].peers, ctx->world_size, 0, out[0].data, out[0].numel, s));
  return 0;
}
