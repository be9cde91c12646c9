// The CUDA driver names the threads it starts by writing /proc/self/task/TID/comm (opened
// for writing, with O_CREAT|O_TRUNC, from the thread that started them: seen with strace on
// the H200), and fails to start ("OS call failed or operation not supported on this OS")
// when the open fails. The write guard refuses it: the file lies beside
// /proc/self/task/TID/mem, and Landlock cannot tell them apart for a thread not yet born.
// So this process's own open, openat and fopen (exported from the executable, they come
// before libc's for every library it loads) send a write of a thread's name to /dev/null;
// everything else goes to libc's. Thread names are only for debuggers.
#include <dlfcn.h>
#include <fcntl.h>

#include <cctype>
#include <cstdarg>
#include <cstdio>
#include <cstring>

namespace {

// "/proc/self/task/N/comm", "/proc/N/task/M/comm", "/proc/thread-self/comm", "/proc/self/comm".
bool is_thread_name(const char* path) {
  if (!path || std::strncmp(path, "/proc/", 6) != 0) return false;
  const size_t n = std::strlen(path);
  return n > 11 && std::strcmp(path + n - 5, "/comm") == 0 && !std::strstr(path, "..");
}

bool writes(int flags) { return (flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_TRUNC)); }

template <class F>
F next(const char* name) {
  return reinterpret_cast<F>(::dlsym(RTLD_NEXT, name));
}

mode_t mode_of(int flags, va_list ap) { return (flags & (O_CREAT | O_TMPFILE)) ? mode_t(va_arg(ap, int)) : 0; }

int open_impl(const char* fn, const char* path, int flags, mode_t mode) {
  using open_fn = int (*)(const char*, int, ...);
  static const auto real = next<open_fn>("open");
  (void)fn;
  if (writes(flags) && is_thread_name(path)) return real("/dev/null", O_WRONLY | (flags & O_CLOEXEC));
  return real(path, flags, mode);
}

int openat_impl(int dir, const char* path, int flags, mode_t mode) {
  using openat_fn = int (*)(int, const char*, int, ...);
  static const auto real = next<openat_fn>("openat");
  if (writes(flags) && is_thread_name(path)) return real(AT_FDCWD, "/dev/null", O_WRONLY | (flags & O_CLOEXEC));
  return real(dir, path, flags, mode);
}

FILE* fopen_impl(const char* path, const char* mode) {
  using fopen_fn = FILE* (*)(const char*, const char*);
  static const auto real = next<fopen_fn>("fopen");
  if (mode && std::strpbrk(mode, "wa+") && is_thread_name(path)) return real("/dev/null", "w");
  return real(path, mode);
}

}  // namespace

extern "C" {
int open(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = mode_of(flags, ap);
  va_end(ap);
  return open_impl("open", path, flags, mode);
}
int open64(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = mode_of(flags, ap);
  va_end(ap);
  return open_impl("open64", path, flags, mode);
}
int openat(int dir, const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = mode_of(flags, ap);
  va_end(ap);
  return openat_impl(dir, path, flags, mode);
}
int openat64(int dir, const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = mode_of(flags, ap);
  va_end(ap);
  return openat_impl(dir, path, flags, mode);
}
// What _FORTIFY_SOURCE's open turns into.
int __open_2(const char* path, int flags) { return open_impl("__open_2", path, flags, 0); }
int __open64_2(const char* path, int flags) { return open_impl("__open64_2", path, flags, 0); }
int __openat_2(int dir, const char* path, int flags) { return openat_impl(dir, path, flags, 0); }
int __openat64_2(int dir, const char* path, int flags) { return openat_impl(dir, path, flags, 0); }
FILE* fopen(const char* path, const char* mode) { return fopen_impl(path, mode); }
FILE* fopen64(const char* path, const char* mode) { return fopen_impl(path, mode); }
}
