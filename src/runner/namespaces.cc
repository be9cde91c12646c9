#include "runner/namespaces.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/mount.h>
#include <linux/securebits.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <sstream>

namespace mgk::runner {

namespace {

// A mount point as /proc/self/mountinfo lists it, with the flags a read-only remount must
// keep (inside a user namespace, dropping a locked flag is refused).
struct MountPoint {
  std::string path;
  unsigned long flags = 0;
};

std::string unescape_mountinfo(const std::string& s) {  // "\040" is a space
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      out += char((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::vector<MountPoint> read_mount_points() {
  std::vector<MountPoint> points;
  std::ifstream in("/proc/self/mountinfo");
  for (std::string line; std::getline(in, line);) {
    std::istringstream f(line);
    std::string id, parent, devno, root, point, options;
    if (!(f >> id >> parent >> devno >> root >> point >> options)) continue;
    MountPoint mp{unescape_mountinfo(point), 0};
    std::stringstream opts(options);
    for (std::string o; std::getline(opts, o, ',');) {
      if (o == "nosuid") mp.flags |= MS_NOSUID;
      else if (o == "nodev") mp.flags |= MS_NODEV;
      else if (o == "noexec") mp.flags |= MS_NOEXEC;
      else if (o == "noatime") mp.flags |= MS_NOATIME;
      else if (o == "nodiratime") mp.flags |= MS_NODIRATIME;
      else if (o == "relatime") mp.flags |= MS_RELATIME;
    }
    points.push_back(std::move(mp));
  }
  return points;
}

bool is_under(const std::string& path, const std::string& dir) {
  return path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 && path[dir.size()] == '/';
}

}  // namespace

struct NamespaceSandbox::Plan {
  bool user_ns = false;
  std::string uid_map, gid_map;
  std::string writable;
  std::vector<std::string> hidden;
  struct Bind {
    std::string path;
    bool under_hidden = false;
    bool writable = false;
  };
  std::vector<Bind> binds;
  std::vector<MountPoint> mounts;  // for kernels without mount_setattr (before 5.12)
  bool drop_caps = false;
};

namespace {

// ---- in the child: async-signal-safe only ----

void put(const char* s) { (void)!::write(2, s, std::strlen(s)); }

[[noreturn]] void die(const char* what, const char* path = nullptr) {
  int e = errno;
  put("mgk: sandbox: ");
  put(what);
  if (path) {
    put(" ");
    put(path);
  }
  put(": errno ");
  char digits[12];
  int n = 0;
  do digits[n++] = char('0' + e % 10), e /= 10;
  while (e && n < 11);
  while (n) (void)!::write(2, &digits[--n], 1);
  put("\n");
  ::_exit(process::kChildSetupFailed);
}

// fork(); the parent keeps no descriptor (not the spawner's exec-error pipe either, which
// would otherwise wait for it), waits for the child and exits with its status (a signal as
// 128 + signal); the child returns, to die with its parent.
void fork_and_wait_in_parent() {
  pid_t pid = ::fork();
  if (pid < 0) die("fork");
  if (pid > 0) {
    ::syscall(SYS_close_range, 0U, ~0U, 0U);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    ::_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
  }
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
}

void write_file(const char* path, const std::string& text) {
  int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) die("open", path);
  if (::write(fd, text.data(), text.size()) != ssize_t(text.size())) die("write", path);
  ::close(fd);
}

int set_mount_attr(const char* path, unsigned flags, uint64_t set, uint64_t clear) {
  struct mount_attr a {};
  a.attr_set = set;
  a.attr_clr = clear;
  return int(::syscall(SYS_mount_setattr, AT_FDCWD, path, flags, &a, sizeof a));
}

// mkdir -p inside a tmpfs we just mounted (the path is absolute and shorter than 4096).
void make_dirs(const std::string& path) {
  char buf[4096];
  size_t n = path.size() < sizeof buf - 1 ? path.size() : sizeof buf - 1;
  std::memcpy(buf, path.data(), n);
  buf[n] = '\0';
  for (size_t i = 1; i <= n; ++i) {
    if (buf[i] != '/' && buf[i] != '\0') continue;
    char c = buf[i];
    buf[i] = '\0';
    if (::mkdir(buf, 0755) != 0 && errno != EEXIST) die("mkdir", buf);
    buf[i] = c;
  }
}

void drop_all_capabilities() {
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) die("no_new_privs");
  if (::prctl(PR_SET_SECUREBITS, SECBIT_KEEP_CAPS_LOCKED | SECBIT_NO_SETUID_FIXUP | SECBIT_NO_SETUID_FIXUP_LOCKED |
                                     SECBIT_NOROOT | SECBIT_NOROOT_LOCKED,
              0, 0, 0) != 0)
    die("securebits");
  for (int cap = 0; cap < 64; ++cap)
    if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL) die("drop from the bounding set");
  ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (::syscall(SYS_capset, &header, data) != 0) die("capset");
}

void enter(const void* context) {
  const auto& p = *static_cast<const NamespaceSandbox::Plan*>(context);
  int flags = CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS;
  if (p.user_ns) flags |= CLONE_NEWUSER;
  if (::unshare(flags) != 0) die("unshare");
  if (p.user_ns) {
    write_file("/proc/self/setgroups", "deny");
    write_file("/proc/self/uid_map", p.uid_map);
    write_file("/proc/self/gid_map", p.gid_map);
  }
  // A new PID namespace takes effect for children: fork once more. The first child stays
  // behind only to pass the exit status on (as exit 128 + signal for a signal).
  fork_and_wait_in_parent();

  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) die("make mounts private");
  // Open what is bound back before anything covers it.
  int fds[64];
  size_t nbinds = p.binds.size() < 64 ? p.binds.size() : 64;
  for (size_t i = 0; i < nbinds; ++i) {
    fds[i] = ::open(p.binds[i].path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fds[i] < 0) die("open", p.binds[i].path.c_str());
  }
  if (set_mount_attr("/", AT_RECURSIVE, MOUNT_ATTR_RDONLY, 0) != 0) {
    if (errno != ENOSYS) die("make / read-only");
    for (const auto& mp : p.mounts)
      if (::mount(nullptr, mp.path.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY | mp.flags, nullptr) != 0 &&
          errno != ENOENT)
        die("remount read-only", mp.path.c_str());
  }
  // Its own /proc: the parent's would list every process and their environments.
  if (::mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0) die("mount /proc");
  if (::mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777") != 0) die("mount /tmp");
  if (::mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777") != 0 && errno != ENOENT)
    die("mount /dev/shm");
  for (const auto& h : p.hidden)
    if (::mount("tmpfs", h.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=16m") != 0) die("hide", h.c_str());
  for (size_t i = 0; i < nbinds; ++i) {
    const auto& b = p.binds[i];
    if (b.under_hidden) make_dirs(b.path);
    char source[64] = "/proc/self/fd/";
    int n = fds[i], len = int(std::strlen(source)), digits = 0;
    char rev[12];
    do rev[digits++] = char('0' + n % 10), n /= 10;
    while (n);
    while (digits) source[len++] = rev[--digits];
    source[len] = '\0';
    if (::mount(source, b.path.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0) die("bind", b.path.c_str());
    if (b.writable && set_mount_attr(b.path.c_str(), 0, 0, MOUNT_ATTR_RDONLY) != 0 &&
        (errno != ENOSYS || ::mount(nullptr, b.path.c_str(), nullptr, MS_REMOUNT | MS_BIND, nullptr) != 0))
      die("make writable", b.path.c_str());
    ::close(fds[i]);
  }
  if (::chdir(p.writable.c_str()) != 0) die("chdir", p.writable.c_str());
  if (p.drop_caps) drop_all_capabilities();
  // The namespace's first process (PID 1) has no default signal actions from inside it:
  // the program itself must not be PID 1, or its own abort() would end as a SIGSEGV. So
  // this one stays as the namespace's init and the program runs as PID 2. This init is a
  // copy of mgk's memory (the API keys among it): it makes itself non-dumpable, so that
  // nothing in the sandbox (which has no capabilities) can read its /proc entries
  // (environ, mem); the program's exec makes the program dumpable again.
  ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  ::prctl(PR_SET_NAME, reinterpret_cast<unsigned long>("mgk-sandbox-init"), 0, 0, 0);
  fork_and_wait_in_parent();
}

}  // namespace

NamespaceSandbox::NamespaceSandbox(NamespaceLayout layout) : plan_(std::make_unique<Plan>()) {
  Plan& p = *plan_;
  p.user_ns = ::geteuid() != 0;
  p.uid_map = "0 " + std::to_string(::geteuid()) + " 1\n";
  p.gid_map = "0 " + std::to_string(::getegid()) + " 1\n";
  p.writable = layout.writable_dir;
  // What lies under /tmp or /dev/shm is covered by their fresh tmpfs already.
  for (const auto& h : layout.hidden)
    if (!is_under(h, "/tmp") && !is_under(h, "/dev/shm")) p.hidden.push_back(h);
  p.drop_caps = layout.drop_capabilities;
  // /tmp and /dev/shm get fresh tmpfs too: what lies under them is bound back.
  auto under_hidden = [&](const std::string& path) {
    for (const auto& h : p.hidden)
      if (is_under(path, h) || path == h) return true;
    return is_under(path, "/tmp") || is_under(path, "/dev/shm");
  };
  p.binds.push_back({p.writable, under_hidden(p.writable), true});
  for (const auto& r : layout.read_only)
    if (under_hidden(r)) p.binds.push_back({r, true, false});
  p.mounts = read_mount_points();
}

NamespaceSandbox::~NamespaceSandbox() = default;

process::ChildHook NamespaceSandbox::hook() const { return {&enter, plan_.get()}; }

}  // namespace mgk::runner
