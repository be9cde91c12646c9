// ATTACK: a raw system call from a section of its own.
// Flaw aimed at: a check that reads only .text for system-call instructions. The `syscall`
// (getpid) sits in a custom executable section '.evil', which mgk_setup calls; no import
// shows it.
// Expected verdict: refused at compile, "... its section '.evil' is executable (only the
// compiler's code sections may be) ...". (Were it to run, the call itself, getpid, is harmless:
// the point is that the static check sees code outside the compiler's sections.)
#include "../candidates/simple_common.cuh"

#ifndef __CUDA_ARCH__  // host code only
// long evil_getpid(void): mov $39 (SYS_getpid), %eax; syscall; ret. Hidden from the dynamic
// symbol table, so that only the section gives it away.
asm(".pushsection .evil,\"ax\",@progbits\n"
    ".globl evil_getpid\n"
    ".hidden evil_getpid\n"
    ".type evil_getpid,@function\n"
    "evil_getpid:\n"
    "  movl $39, %eax\n"
    "  syscall\n"
    "  ret\n"
    ".size evil_getpid, .-evil_getpid\n"
    ".popsection\n");
#endif
extern "C" __attribute__((visibility("hidden"))) long evil_getpid();

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  std::fprintf(stderr, "attack: getpid by a syscall in '.evil': %ld\n", evil_getpid());
  return simple::setup(ctx);
}
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { simple::teardown(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));
  MGK_CUDA_TRY(ctx, simple::sum(out[0].dtype, in[0].peers, ctx->world_size, 0, out[0].data, out[0].numel, s));
  return 0;
}
