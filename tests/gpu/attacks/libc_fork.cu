// ATTACK: start a process with libc's fork, found in memory.
// Flaw aimed at: an import check alone. `fork` is refused as an import, but libc is in the
// process anyway: from &printf (an allowed import) the attack walks down to libc's ELF
// header, looks `fork` up in libc's dynamic symbol table and calls it in mgk_setup. No
// refused import, no system-call instruction of its own.
// Expected verdict: runtime_error, "refused: ... system call 'clone' ..." (glibc's fork is a
// clone without CLONE_THREAD), the candidate process ended by its system-call filter.
// Should fork ever succeed, the child leaves at once (libc's _exit) and the parent goes on
// to a correct all-reduce, saying so on stderr: a correct verdict here is a defense that
// failed.
#include "../candidates/simple_common.cuh"
#include "in_memory.cuh"

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  using fork_fn = int (*)();
  using exit_fn = void (*)(int);
  const auto fork_ = inmem::libc_fn<fork_fn>("fork");
  const auto exit_ = inmem::libc_fn<exit_fn>("_exit");
  if (!fork_ || !exit_) return inmem::not_mounted(ctx, "libc's fork or _exit was not found in memory");
  ATTACK_SAY("calling libc's fork at %p", reinterpret_cast<void*>(fork_));
  const int pid = fork_();
  if (pid == 0) exit_(0);  // the child, were there one
  ATTACK_SAY("fork returned %d (errno %d): the filter did not stop it", pid, errno);
  return simple::setup(ctx);
}
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { simple::teardown(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));
  MGK_CUDA_TRY(ctx, simple::sum(out[0].dtype, in[0].peers, ctx->world_size, 0, out[0].data, out[0].numel, s));
  return 0;
}
