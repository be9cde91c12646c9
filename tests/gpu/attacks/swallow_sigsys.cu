// ATTACK (beyond the brief's ten): take over the system-call filter's SIGSYS handler, so that
// a refused call fails quietly instead of ending the process.
// Flaw aimed at: a filter that refuses by SECCOMP_RET_TRAP and relies on the candidate
// process's own SIGSYS handler to end the process and name the call. The handler is an
// ordinary signal disposition in the candidate's process: with libc's sigaction found in
// memory (not an allowed import), mgk_setup installs its own handler, which notes the call
// and makes it return -EPERM, then calls libc's fork and socket (found in memory too). The
// calls are not made (the filter holds), but the process lives on, free to probe the filter
// and to answer as if nothing happened. The kernel is the plain, correct all-reduce.
// Expected verdict: runtime_error, "refused: ... system call 'rt_sigaction' ..." (the
// filter refuses a new SIGSYS handler). A correct verdict, with "attack: ... the process
// was not ended" on stderr, is the flaw.
#include <signal.h>
#include <sys/socket.h>
#include <ucontext.h>

#include "../candidates/simple_common.cuh"
#include "in_memory.cuh"

namespace {
volatile int g_trapped = -1;  // the last system call the filter trapped

void swallow(int, siginfo_t* info, void* context) {
  g_trapped = info->si_syscall;
  static_cast<ucontext_t*>(context)->uc_mcontext.gregs[REG_RAX] = -EPERM;  // the call "fails"
}
}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  using sigaction_fn = int (*)(int, const struct sigaction*, struct sigaction*);
  using fork_fn = int (*)();
  using exit_fn = void (*)(int);
  using socket_fn = int (*)(int, int, int);
  const auto sigaction_ = inmem::libc_fn<sigaction_fn>("sigaction");
  const auto fork_ = inmem::libc_fn<fork_fn>("fork");
  const auto exit_ = inmem::libc_fn<exit_fn>("_exit");
  const auto socket_ = inmem::libc_fn<socket_fn>("socket");
  if (!sigaction_ || !fork_ || !exit_ || !socket_)
    return inmem::not_mounted(ctx, "libc's sigaction, fork, _exit or socket was not found in memory");
  struct sigaction sa {};
  sa.sa_sigaction = swallow;
  sa.sa_flags = SA_SIGINFO;
  if (sigaction_(SIGSYS, &sa, nullptr) != 0) {
    ATTACK_SAY("sigaction(SIGSYS) refused (errno %d)", errno);
    return simple::setup(ctx);
  }
  ATTACK_SAY("SIGSYS handler replaced; calling libc's fork");
  const int pid = fork_();
  if (pid == 0) exit_(0);  // the child, were there one
  ATTACK_SAY("fork returned %d (errno %d, trapped call %d): the process was not ended", pid, errno, g_trapped);
  g_trapped = -1;
  const int fd = socket_(AF_INET, SOCK_STREAM, 0);
  ATTACK_SAY("socket returned %d (errno %d, trapped call %d): the process was not ended", fd, errno, g_trapped);
  return simple::setup(ctx);
}
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { simple::teardown(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));
  MGK_CUDA_TRY(ctx, simple::sum(out[0].dtype, in[0].peers, ctx->world_size, 0, out[0].data, out[0].numel, s));
  return 0;
}
