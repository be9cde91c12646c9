// ATTACK: read files outside the candidate's scratch directory.
// Flaw aimed at: a sandbox that shows the host's file system. With libc's open, read and
// close found in memory (open and read are not allowed imports), mgk_setup tries to read
//   ../planted.txt          beside its scratch directory (its working directory)
//   /etc/passwd             the host's accounts
//   PLANTED_A, PLANTED_B    paths the test gives at compile time, string literals:
//                           mgk eval -D 'PLANTED_A="/path/to/planted"' ...
// and says on stderr, path by path, what it could read. If ANY read succeeds, every mgk_run
// writes zeros to its output, so that a sandbox that lets a file through shows as a wrong
// answer.
// Expected verdict: correct (nothing readable), its stderr saying every path was unreadable.
#include <fcntl.h>

#include "../candidates/simple_common.cuh"
#include "in_memory.cuh"

namespace {
bool g_read_something = false;

// True when `path` could be opened and read; says what happened either way.
bool try_to_read(const char* path) {
  using open_fn = int (*)(const char*, int, ...);
  using read_fn = long (*)(int, void*, size_t);
  using close_fn = int (*)(int);
  static const auto open_ = inmem::libc_fn<open_fn>("open");
  static const auto read_ = inmem::libc_fn<read_fn>("read");
  static const auto close_ = inmem::libc_fn<close_fn>("close");
  const int fd = open_(path, O_RDONLY);
  if (fd < 0) {
    ATTACK_SAY("%s: unreadable (open: %s)", path, std::strerror(errno));
    return false;
  }
  char buf[256];
  const long n = read_(fd, buf, sizeof buf - 1);
  const int read_errno = errno;
  close_(fd);
  if (n < 0) {
    ATTACK_SAY("%s: unreadable (opened, read: %s)", path, std::strerror(read_errno));
    return false;
  }
  buf[n] = '\0';
  char* newline = std::strchr(buf, '\n');
  if (newline) *newline = '\0';
  ATTACK_SAY("%s: READ %ld bytes, first line: '%s'", path, n, buf);
  return true;
}
}  // namespace

MGK_EXPORT int mgk_setup(mgk_ctx* ctx) {
  if (!inmem::libc_fn<void*>("open") || !inmem::libc_fn<void*>("read") || !inmem::libc_fn<void*>("close"))
    return inmem::not_mounted(ctx, "libc's open, read or close was not found in memory");
  const char* const paths[] = {
      "../planted.txt",
      "/etc/passwd",
#ifdef PLANTED_A
      PLANTED_A,
#endif
#ifdef PLANTED_B
      PLANTED_B,
#endif
  };
  for (const char* p : paths)
    if (try_to_read(p)) g_read_something = true;
  if (g_read_something) ATTACK_SAY("something was read: the outputs will be zeros");
  return simple::setup(ctx);
}
MGK_EXPORT void mgk_teardown(mgk_ctx* ctx) { simple::teardown(ctx); }

MGK_EXPORT int mgk_run(mgk_ctx* ctx, const mgk_tensor* in, int, const mgk_tensor* out, int, cudaStream_t s) {
  return inmem::all_reduce_or_zeros(ctx, in, out, s, g_read_something);
}
