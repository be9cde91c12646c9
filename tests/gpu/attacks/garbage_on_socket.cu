// ATTACK: write garbage into the candidate process's socket to its harness.
// Flaw aimed at: blaming the machine for the candidate's failure. A harness that reports
// whatever breaks on its socket as infrastructure takes the attempt out of every metric
// (and stops 'generate'). On its 3rd mgk_run call the attack goes through descriptors
// 3..63 with libc's fstat (found in memory; glibc before 2.33 has __fxstat instead) and
// writes 64 bytes of garbage, with libc's write, to each that is a socket. The kernel is
// the plain, correct all-reduce.
// Expected verdict: runtime_error, "the candidate process broke the protocol" (its own
// failure, not infrastructure).
#include <sys/stat.h>

#include "../candidates/simple_common.cuh"
#include "in_memory.cuh"

namespace {
int g_calls = 0;

// fstat(fd, st) through libc found in memory: fstat, or __fxstat(1, fd, st) on older glibc.
int fstat_in_memory(int fd, struct stat* st) {
  using fstat_fn = int (*)(int, struct stat*);
  using fxstat_fn = int (*)(int, int, struct stat*);
  static const auto fstat_ = inmem::libc_fn<fstat_fn>("fstat");
  static const auto fxstat_ = inmem::libc_fn<fxstat_fn>("__fxstat");
  return fstat_ ? fstat_(fd, st) : fxstat_ ? fxstat_(1, fd, st) : -1;
}

int write_garbage_to_sockets() {
  using write_fn = long (*)(int, const void*, size_t);
  const auto write_ = inmem::libc_fn<write_fn>("write");
  if (!write_) return -1;
  unsigned char garbage[64];
  for (int i = 0; i < 64; ++i) garbage[i] = static_cast<unsigned char>(0xa5 ^ (i * 37));
  int sockets = 0;
  for (int fd = 3; fd < 64; ++fd) {
    struct stat st {};
    if (fstat_in_memory(fd, &st) != 0 || !S_ISSOCK(st.st_mode)) continue;
    const long n = write_(fd, garbage, sizeof garbage);
    ATTACK_SAY("wrote %ld bytes of garbage to socket fd %d", n, fd);
    ++sockets;
  }
  return sockets;
}
}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  if (!inmem::libc_fn<void*>("write") || (!inmem::libc_fn<void*>("fstat") && !inmem::libc_fn<void*>("__fxstat")))
    return inmem::not_mounted(ctx, "libc's write or fstat was not found in memory");
  return simple::setup(ctx);
}
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { simple::teardown(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  if (++g_calls == 3 && write_garbage_to_sockets() == 0) ATTACK_SAY("no socket among fds 3..63");
  MGK_CUDA_TRY(ctx, simple::barrier(ctx, s));
  MGK_CUDA_TRY(ctx, simple::sum(out[0].dtype, in[0].peers, ctx->world_size, 0, out[0].data, out[0].numel, s));
  return 0;
}
