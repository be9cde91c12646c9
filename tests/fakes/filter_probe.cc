// Started by the launcher exactly as mgk-candidate is (same sandbox, same socket), it
// installs mgk-candidate's system-call filter and then does what its name says after
// "filter-probe-", by raw system call (a `syscall` instruction of its own, so no libc
// wrapper, import check or source check stands in the way):
//   allowed  what a CUDA host program does (threads, files in its directory, memory), then
//            prints "allowed: ok"
//   fork     fork(2)                 socket  socket(AF_INET)      ptrace   ptrace(PTRACE_TRACEME)
//   execmem  mmap of anonymous executable memory        killinit  kill(1, 0)
// (each harmless should the filter let it through: the test runs them unisolated too)
//   scratchexec  an executable mapping of a file it wrote in its directory: the namespaces
//            path mounts that noexec (the call returns -EPERM; the filter lets it be)
// A refused call never returns: the filter's handler prints the refusal and exits.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "syscall_filter.h"

namespace {

long raw(long nr, long a = 0, long b = 0, long c = 0, long d = 0, long e = 0, long f = 0) {
  long ret;
  register long r10 asm("r10") = d;
  register long r8 asm("r8") = e;
  register long r9 asm("r9") = f;
  asm volatile("syscall" : "=a"(ret) : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9) : "rcx", "r11", "memory");
  return ret;
}

void said(const char* what, long rc) {
  std::printf("%s: returned %ld\n", what, rc);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string name = argv[0];
  const std::string mode = name.substr(name.rfind("filter-probe-") + 13);
  try {
    mgk::sandbox::install_syscall_filter();
  } catch (const std::exception& e) {
    std::printf("filter: not installed: %s\n", e.what());
    return 3;
  }
  std::printf("filter: installed\n");
  std::fflush(stdout);
  if (mode == "allowed") {
    std::thread t([] { std::printf("thread: ran\n"); });
    t.join();
    int fd = ::open("scratch.txt", O_CREAT | O_WRONLY | O_TRUNC, 0644);
    bool wrote = fd >= 0 && ::write(fd, "x", 1) == 1;
    if (fd >= 0) ::close(fd);
    void* m = ::mmap(nullptr, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    bool mapped = m != MAP_FAILED && ::mprotect(m, 4096, PROT_READ) == 0;
    ::raise(SIGCHLD);  // a signal to itself (ignored by default)
    std::printf("allowed: %s\n", wrote && mapped ? "ok" : "FAILED");
  } else if (mode == "fork") {
    said("fork", raw(SYS_fork));
  } else if (mode == "socket") {
    said("socket", raw(SYS_socket, AF_INET, SOCK_STREAM, 0));
  } else if (mode == "ptrace") {
    said("ptrace", raw(SYS_ptrace, PTRACE_TRACEME));
  } else if (mode == "execmem") {
    said("mmap", raw(SYS_mmap, 0, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  } else if (mode == "killinit") {
    said("kill", raw(SYS_kill, 1, 0));
  } else if (mode == "scratchexec") {
    int fd = ::open("code.bin", O_CREAT | O_RDWR | O_TRUNC, 0755);
    const unsigned char ret = 0xc3;
    if (fd < 0 || ::write(fd, &ret, 1) != 1) return 3;
    const long rc = raw(SYS_mmap, 0, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
    std::printf("scratchexec: %s\n", rc == -EPERM ? "refused by the mount" : rc < 0 ? "failed" : "mapped");
  } else {
    std::printf("unknown mode '%s'\n", mode.c_str());
    return 64;
  }
  std::fflush(stdout);
  // Stay until the harness side closes, as a candidate process does.
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--fd") == 0) {
      char c;
      while (::read(std::atoi(argv[i + 1]), &c, 1) > 0) {
      }
    }
  return 0;
}
