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
//   writeguard  mgk-candidate's write guard first (before the filter, as mgk-candidate does),
//            then /proc/self/mem opened for writing, a file made beside its directory and
//            one in it, a thread named as the CUDA driver names its threads (its comm file opened for writing):
//            "guard: ...", "proc self mem: ...", "beside: ...", "name a thread: ...", "inside: ..."
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
#include "write_guard.h"

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
  if (mode == "writeguard") {
    const auto guard = mgk::sandbox::restrict_writes(mgk::sandbox::candidate_writable_dirs());
    std::printf("guard: %s\n", guard.description.c_str());
  }
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
  } else if (mode == "writeguard") {
    auto try_open = [](const char* path, int flags) {
      const int fd = ::open(path, flags, 0644);
      if (fd < 0) return std::string("denied (") + std::strerror(errno) + ")";
      ::close(fd);
      return std::string("OPENED");
    };
    std::printf("proc self mem: %s\n", try_open("/proc/self/mem", O_RDWR).c_str());
    std::printf("beside: %s\n", try_open("../beside-guard.txt", O_CREAT | O_WRONLY).c_str());
    // As the CUDA runtime names the threads it starts: from the thread that started them.
    std::thread named([] { ::usleep(100000); });
    const std::string comm = "/proc/self/task/" + std::to_string(::gettid()) + "/comm";
    const std::string name = try_open(comm.c_str(), O_WRONLY | O_CREAT | O_TRUNC);
    named.join();
    std::printf("name a thread: %s\n", name.c_str());
    std::printf("inside: %s\n", try_open("inside-guard.txt", O_CREAT | O_WRONLY).c_str());
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
