#include "syscall_filter.h"

#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "wire/candidate_exit.h"

namespace mgk::sandbox {

namespace {

// What the CUDA runtime and driver, libc, libstdc++ and the candidate process's own code
// need once the CUDA context exists: the list was read off the suite's kernels on the H200
// (bench/RESULTS.md). The calls that take arguments worth looking at are added below with
// conditions and are not here.
const char* const kAllowed[] = {
    // files (the sandbox decides what there is to open) and descriptors
    "read", "write", "readv", "writev", "pread64", "pwrite64", "preadv", "pwritev", "preadv2", "pwritev2", "open",
    "openat", "openat2", "close", "close_range", "stat", "fstat", "lstat", "newfstatat", "statx", "statfs", "fstatfs",
    "lseek", "access", "faccessat", "faccessat2", "readlink", "readlinkat", "getdents", "getdents64", "getcwd", "chdir",
    "fchdir", "mkdir", "mkdirat", "rmdir", "unlink", "unlinkat", "rename", "renameat", "renameat2", "truncate",
    "ftruncate", "fallocate", "fsync", "fdatasync", "fadvise64", "flock", "fcntl", "dup", "dup2", "dup3", "pipe",
    "pipe2", "umask",
    // waiting on descriptors; the socket to the harness (made before the filter)
    "poll", "ppoll", "select", "pselect6", "epoll_create", "epoll_create1", "epoll_ctl", "epoll_wait", "epoll_pwait",
    "epoll_pwait2", "eventfd", "eventfd2", "sendto", "recvfrom", "sendmsg", "recvmsg", "getsockopt", "setsockopt",
    "getsockname", "getpeername",
    // memory (mmap, mprotect and pkey_mprotect: below, without PROT_EXEC)
    "brk", "munmap", "mremap", "msync", "madvise", "mincore", "mlock", "mlock2", "munlock", "mlockall", "munlockall",
    "membarrier", "get_mempolicy", "set_mempolicy", "mbind", "move_pages",
    // threads, futexes, signals to itself (clone, kill, tgkill: below)
    "futex", "futex_waitv", "set_robust_list", "get_robust_list", "set_tid_address", "rseq", "arch_prctl", "prctl",
    "seccomp", "rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "rt_sigpending", "rt_sigtimedwait", "rt_sigsuspend",
    "sigaltstack", "restart_syscall", "pause", "exit", "exit_group", "wait4", "waitid",
    // scheduling and time
    "sched_yield", "sched_getaffinity", "sched_setaffinity", "sched_getparam", "sched_getscheduler",
    "sched_get_priority_max", "sched_get_priority_min", "sched_getattr", "getpriority", "setpriority", "nanosleep",
    "clock_nanosleep", "clock_gettime", "clock_getres", "gettimeofday", "time", "times", "alarm", "getitimer",
    "setitimer", "timer_create", "timer_settime", "timer_gettime", "timer_getoverrun", "timer_delete",
    "timerfd_create", "timerfd_settime", "timerfd_gettime",
    // who and where it is
    "getpid", "gettid", "getppid", "getuid", "geteuid", "getgid", "getegid", "getgroups", "getresuid", "getresgid",
    "getpgrp", "getpgid", "getsid", "capget", "getrlimit", "setrlimit", "getrusage", "uname", "sysinfo", "getcpu",
    "getrandom",
};

struct ClassDef {
  const char* what;
  const char* why;
  const char* rule;  // its class in src/eval/candidate_rules.h (a CPU test holds them to it)
  std::vector<std::string> calls;
};

// Refused, by class, with the words a refusal uses. Anything neither allowed above nor
// named here is refused too, as "not a call a kernel's host code needs".
const ClassDef kClasses[] = {
    {"starting processes or programs", "candidates may not start processes", "processes",
     {"fork", "vfork", "clone", "clone3", "execve", "execveat"}},
    {"sockets", "candidates may not open sockets or network connections", "sockets",
     {"socket", "socketpair", "connect", "bind", "listen", "accept", "accept4", "shutdown"}},
    {"reaching other processes", "candidates may not inspect or control other processes", "process-control",
     {"ptrace", "process_vm_readv", "process_vm_writev", "process_madvise", "kcmp", "pidfd_open", "pidfd_getfd",
      "pidfd_send_signal"}},
    {"signals to other processes", "candidates may signal only their own process", "process-control",
     {"kill", "tkill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo"}},
    {"changing the sandbox", "candidates may not change their sandbox (mounts, namespaces, root, identity)",
     "process-control",
     {"mount", "umount2", "unshare", "setns", "chroot", "pivot_root", "open_tree", "move_mount", "fsopen", "fsmount",
      "fspick", "mount_setattr", "setuid", "setgid", "setreuid", "setregid", "setresuid", "setresgid", "setfsuid",
      "setfsgid", "setgroups", "capset", "setsid", "setpgid", "personality"}},
    {"executable memory", "candidates may not make memory executable (nor create memory files to map)",
     "memory-mapping",
     {"mmap", "mprotect", "pkey_mprotect", "memfd_create", "memfd_secret"}},
    {"the kernel and the system", "candidates may not change the kernel or the system", "process-control",
     {"bpf", "perf_event_open", "init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load",
      "reboot", "swapon", "swapoff", "acct", "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "keyctl",
      "add_key", "request_key", "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register", "iopl",
      "ioperm", "quotactl", "mknod", "mknodat", "name_to_handle_at", "open_by_handle_at", "syslog", "vhangup",
      "sethostname", "setdomainname"}},
    {"terminal input", "candidates may not type into a terminal (ioctl TIOCSTI)", "process-control", {"ioctl"}},
    {"the filter's own handler", "candidates may not replace the handler of refused system calls (SIGSYS)",
     "system-calls",
     {"rt_sigaction"}},
};

constexpr int kMaxSyscall = 1024;
const char* g_names[kMaxSyscall];  // filled once, before the first filter: the handler only reads
const char* g_whys[kMaxSyscall];
const char* g_rules[kMaxSyscall];
const char* const kUnlisted = "it is not among the system calls a kernel's host code needs";
const char* const kUnlistedRule = "system-calls";

void fill_tables() {
  static bool done = false;
  if (done) return;
  done = true;
  for (int nr = 0; nr < kMaxSyscall; ++nr) {
    g_names[nr] = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);  // malloc'd, kept for the process
    g_whys[nr] = kUnlisted;
    g_rules[nr] = kUnlistedRule;
  }
  for (const auto& c : kClasses)
    for (const auto& name : c.calls) {
      const int nr = seccomp_syscall_resolve_name(name.c_str());
      if (nr >= 0 && nr < kMaxSyscall) g_whys[nr] = c.why, g_rules[nr] = c.rule;
    }
}

// Async-signal-safe: writes and a raw exit only.
void put(const char* s) { (void)!::write(2, s, std::strlen(s)); }

void on_refused_call(int, siginfo_t* info, void*) {
  const int nr = info->si_syscall;
  const bool known = nr >= 0 && nr < kMaxSyscall;
  char digits[16];
  int n = 0;
  unsigned v = unsigned(nr < 0 ? -nr : nr);
  do digits[n++] = char('0' + v % 10), v /= 10;
  while (v && n < 15);
  char number[20];
  int len = 0;
  if (nr < 0) number[len++] = '-';
  while (n) number[len++] = digits[--n];
  number[len] = '\0';
  put(wire::kCandidateRefusedPrefix);
  put("system call '");
  put(known && g_names[nr] ? g_names[nr] : "?");
  put("' (number ");
  put(number);
  put("): ");
  put(known ? g_whys[nr] : kUnlisted);
  put(wire::kCandidateRefusedRule);
  put(known ? g_rules[nr] : kUnlistedRule);
  put(")\n");
  ::syscall(SYS_exit_group, wire::kCandidateRefusedExit);
}

void check(int rc, const char* what) {
  if (rc < 0) throw std::runtime_error(std::string("seccomp: ") + what + ": " + std::strerror(-rc));
}

int nr_of(const char* name) {
  const int nr = seccomp_syscall_resolve_name(name);
  if (nr == __NR_SCMP_ERROR) throw std::runtime_error(std::string("seccomp: unknown system call ") + name);
  return nr;
}

struct Filter {
  scmp_filter_ctx ctx;
  explicit Filter(uint32_t default_action) : ctx(seccomp_init(default_action)) {
    if (!ctx) throw std::runtime_error("seccomp: cannot create a filter");
    // Every thread, the CUDA driver's among them: a filter on this thread alone would leave
    // the driver's threads (which run host callbacks) unfiltered.
    check(seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1), "synchronise the threads");
    // A call made in another architecture's convention (int 0x80, x32) ends the process.
    check(seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS), "set the bad-arch action");
  }
  ~Filter() { seccomp_release(ctx); }
  void rule(uint32_t action, const char* name, std::initializer_list<scmp_arg_cmp> cmp = {}) {
    check(seccomp_rule_add_array(ctx, action, nr_of(name), unsigned(cmp.size()), cmp.begin()), name);
  }
  void load() { check(seccomp_load(ctx), "load the filter"); }
};

void install() {
  Filter f(SCMP_ACT_TRAP);
  for (const char* name : kAllowed) {
    const int nr = seccomp_syscall_resolve_name(name);
    if (nr != __NR_SCMP_ERROR) check(seccomp_rule_add(f.ctx, SCMP_ACT_ALLOW, nr, 0), name);
  }
  const uint64_t self = uint64_t(::getpid());
  // Threads only: a clone without CLONE_THREAD is a new process. clone3 hides its flags in
  // memory the filter cannot read, so it is "not implemented", and glibc falls back to clone.
  f.rule(SCMP_ACT_ALLOW, "clone", {SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD)});
  f.rule(SCMP_ACT_ERRNO(ENOSYS), "clone3");
  f.rule(SCMP_ACT_ALLOW, "mmap", {SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0)});
  f.rule(SCMP_ACT_ALLOW, "mmap", {SCMP_A3(SCMP_CMP_MASKED_EQ, MAP_ANONYMOUS, 0)});  // a file's code: loader, driver
  f.rule(SCMP_ACT_ALLOW, "mprotect", {SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0)});
  f.rule(SCMP_ACT_ALLOW, "pkey_mprotect", {SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0)});
  f.rule(SCMP_ACT_ALLOW, "ioctl");  // but TIOCSTI, below
  for (const char* to_self : {"kill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo"})
    f.rule(SCMP_ACT_ALLOW, to_self, {SCMP_A0(SCMP_CMP_EQ, self)});
  f.rule(SCMP_ACT_ALLOW, "prlimit64", {SCMP_A0(SCMP_CMP_EQ, 0)});
  f.rule(SCMP_ACT_ALLOW, "prlimit64", {SCMP_A0(SCMP_CMP_EQ, self)});
  f.load();
  // A refusal inside an allowed call needs a filter of its own (filters stack, the strictest
  // answer wins): the kernel reads ioctl's request as 32 bits, so the mask.
  Filter refine(SCMP_ACT_ALLOW);
  refine.rule(SCMP_ACT_TRAP, "ioctl", {SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCSTI)});
  // The handler that names a refused call stays the filter's: a candidate's own could let
  // refused calls return and carry on. (Blocking SIGSYS instead gets the process killed by
  // it at the next refused call: the kernel does not let a forced signal wait.)
  refine.rule(SCMP_ACT_TRAP, "rt_sigaction", {SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffu, SIGSYS), SCMP_A1(SCMP_CMP_NE, 0)});
  refine.load();
}

}  // namespace

void install_syscall_filter() {
  fill_tables();
  struct sigaction sa {};
  sa.sa_sigaction = on_refused_call;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  if (::sigaction(SIGSYS, &sa, nullptr) != 0)
    throw std::runtime_error(std::string("sigaction(SIGSYS): ") + std::strerror(errno));
  install();
}

const std::vector<RefusedCallClass>& refused_call_classes() {
  static const std::vector<RefusedCallClass> classes = [] {
    std::vector<RefusedCallClass> v;
    for (const auto& c : kClasses) v.push_back({c.what, c.why, c.rule, c.calls});
    v.push_back({"any other call", kUnlisted, kUnlistedRule, {}});
    return v;
  }();
  return classes;
}

}  // namespace mgk::sandbox
