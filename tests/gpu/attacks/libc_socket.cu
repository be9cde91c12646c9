// ATTACK: open a network socket with libc's socket, found in memory.
// Flaw aimed at: an import check alone. `socket` is refused as an import; the attack finds
// it in libc's dynamic symbol table (libc found from &printf) and calls
// socket(AF_INET, SOCK_STREAM, 0) in mgk_setup.
// Expected verdict: runtime_error, "refused: ... system call 'socket' ...", the candidate
// process ended by its system-call filter. Should the call return instead, the attack says
// so on stderr and goes on to a correct all-reduce: a correct verdict here is a defense that
// failed (a descriptor >= 0: it has a socket; -1: refused quietly, not by the filter's rule).
#include <sys/socket.h>

#include "../candidates/simple_common.cuh"
#include "in_memory.cuh"

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  using socket_fn = int (*)(int, int, int);
  const auto socket_ = inmem::libc_fn<socket_fn>("socket");
  if (!socket_) return inmem::not_mounted(ctx, "libc's socket was not found in memory");
  ATTACK_SAY("calling libc's socket(AF_INET, SOCK_STREAM, 0) at %p", reinterpret_cast<void*>(socket_));
  const int fd = socket_(AF_INET, SOCK_STREAM, 0);
  ATTACK_SAY("socket returned %d (errno %d): the filter did not stop it", fd, errno);
  return simple::setup(ctx);
}
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { simple::teardown(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));
  MGK_CUDA_TRY(ctx, simple::sum(out[0].dtype, in[0].peers, ctx->world_size, 0, out[0].data, out[0].numel, s));
  return 0;
}
