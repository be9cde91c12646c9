#include "sandboxing/namespaces.h"

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
#include <filesystem>
#include <fstream>
#include <sstream>

namespace mgk::sandboxing {

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
  // minimal_root: the new root is built on a tmpfs at kNewRoot, step by step, in order
  // (parents first), then pivoted to. Targets are full paths under kNewRoot.
  struct Step {
    enum Kind { kBindDir, kBindFile, kMask, kSymlink, kTmpfs, kProc } kind;
    std::string source;  // binds: the host path (opened before anything covers it); symlinks: the link's text
    std::string target;
    unsigned long attr_set = 0;  // MOUNT_ATTR_* for binds; mount flags for tmpfs and proc
    const char* data = nullptr;  // tmpfs options
  };
  bool minimal = false;
  std::vector<Step> steps;
  std::string old_root;  // under kNewRoot, detached after the pivot
};

namespace {

constexpr const char* kNewRoot = "/tmp";  // a tmpfs there in the child's namespace; left by pivot_root

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

// mkdir -p inside a tmpfs we just mounted (the path is absolute and shorter than 4096);
// `length` of `path`'s characters only (no allocation: this runs between fork and exec).
void make_dirs(const char* path, size_t length) {
  char buf[4096];
  size_t n = length < sizeof buf - 1 ? length : sizeof buf - 1;
  std::memcpy(buf, path, n);
  buf[n] = '\0';
  for (size_t i = 1; i <= n; ++i) {
    if (buf[i] != '/' && buf[i] != '\0') continue;
    char c = buf[i];
    buf[i] = '\0';
    if (::mkdir(buf, 0755) != 0 && errno != EEXIST) die("mkdir", buf);
    buf[i] = c;
  }
}

// "/proc/self/fd/N": a descriptor opened before the view changed, as a path mount takes.
void fd_path(int fd, char (&out)[64]) {
  const char* prefix = "/proc/self/fd/";
  int len = int(std::strlen(prefix));
  std::memcpy(out, prefix, size_t(len));
  char rev[12];
  int digits = 0;
  do rev[digits++] = char('0' + fd % 10), fd /= 10;
  while (fd && digits < 11);
  while (digits) out[len++] = rev[--digits];
  out[len] = '\0';
}

// Only the directory part of `path` made (for a file's mount point).
void make_parent_dirs(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash != std::string::npos && slash > 0) make_dirs(path.data(), slash);
}

void make_dirs(const std::string& path) { make_dirs(path.data(), path.size()); }

// The candidate's root: an empty tmpfs, holding only what the plan's steps put there.
void build_minimal_root(const NamespaceSandbox::Plan& p) {
  using Step = NamespaceSandbox::Plan::Step;
  constexpr size_t kMaxBinds = 128;
  int fds[kMaxBinds];
  size_t opened = 0;
  for (const auto& st : p.steps) {
    if (st.kind != Step::kBindDir && st.kind != Step::kBindFile && st.kind != Step::kMask) continue;
    if (opened == kMaxBinds) die("too many paths to bind");
    fds[opened] = ::open(st.source.c_str(), O_PATH | O_CLOEXEC | (st.kind == Step::kBindDir ? O_DIRECTORY : 0));
    if (fds[opened] < 0) die("open", st.source.c_str());
    ++opened;
  }
  if (::mount("tmpfs", kNewRoot, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=16m") != 0) die("mount the new root");
  size_t next = 0;
  for (const auto& st : p.steps) {
    const char* t = st.target.c_str();
    switch (st.kind) {
      case Step::kBindDir:
      case Step::kBindFile:
      case Step::kMask: {  // a mask covers a file a bind above made: nothing to create
        if (st.kind == Step::kBindDir) {
          make_dirs(st.target);
        } else if (st.kind == Step::kBindFile) {
          make_parent_dirs(st.target);
          int f = ::open(t, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
          if (f < 0) die("create", t);
          ::close(f);
        }
        char source[64];
        fd_path(fds[next], source);
        if (::mount(source, t, nullptr, MS_BIND | MS_REC, nullptr) != 0) die("bind", t);
        ::close(fds[next++]);
        if (set_mount_attr(t, AT_RECURSIVE, st.attr_set, 0) != 0) {
          if (errno != ENOSYS) die("set the mount's flags", t);
          unsigned long flags = MS_REMOUNT | MS_BIND;
          if (st.attr_set & MOUNT_ATTR_RDONLY) flags |= MS_RDONLY;
          if (st.attr_set & MOUNT_ATTR_NOSUID) flags |= MS_NOSUID;
          if (st.attr_set & MOUNT_ATTR_NODEV) flags |= MS_NODEV;
          if (st.attr_set & MOUNT_ATTR_NOEXEC) flags |= MS_NOEXEC;
          if (::mount(nullptr, t, nullptr, flags, nullptr) != 0) die("remount", t);
        }
        break;
      }
      case Step::kSymlink:
        make_parent_dirs(st.target);
        if (::symlink(st.source.c_str(), t) != 0) die("symlink", t);
        break;
      case Step::kTmpfs:
        make_dirs(st.target);
        if (::mount("tmpfs", t, "tmpfs", st.attr_set, st.data) != 0) die("mount tmpfs", t);
        break;
      case Step::kProc:
        make_dirs(st.target);
        // Its own /proc: the parent's would list every process and their environments.
        if (::mount("proc", t, "proc", st.attr_set, nullptr) != 0) die("mount /proc");
        break;
    }
  }
  make_dirs(p.old_root);
  if (::syscall(SYS_pivot_root, kNewRoot, p.old_root.c_str()) != 0) die("pivot_root");
  if (::chdir("/") != 0) die("chdir /");
  const char* old = p.old_root.c_str() + std::strlen(kNewRoot);
  if (::umount2(old, MNT_DETACH) != 0) die("detach the host's root");
  if (::rmdir(old) != 0) die("rmdir", old);
  if (set_mount_attr("/", 0, MOUNT_ATTR_RDONLY, 0) != 0 &&
      (errno != ENOSYS || ::mount(nullptr, "/", nullptr, MS_REMOUNT | MS_RDONLY, nullptr) != 0))
    die("make the new root read-only");
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

// The host's whole root made read-only, with a private /tmp, /dev/shm and /proc, `hidden`
// covered and the binds made again on top.
void cover_host_root(const NamespaceSandbox::Plan& p) {
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
    char source[64];
    fd_path(fds[i], source);
    if (::mount(source, b.path.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0) die("bind", b.path.c_str());
    if (b.writable && set_mount_attr(b.path.c_str(), 0, 0, MOUNT_ATTR_RDONLY) != 0 &&
        (errno != ENOSYS || ::mount(nullptr, b.path.c_str(), nullptr, MS_REMOUNT | MS_BIND, nullptr) != 0))
      die("make writable", b.path.c_str());
    ::close(fds[i]);
  }
}

void finish_entering(const NamespaceSandbox::Plan& p) {
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
  if (p.minimal) build_minimal_root(p);
  else cover_host_root(p);
  if (::chdir(p.writable.c_str()) != 0) die("chdir", p.writable.c_str());
  finish_entering(p);
}

}  // namespace

namespace {

// The steps that build the candidate's root (build_minimal_root), parents first: /dev with
// only `devices`, /dev/shm, /proc, /tmp, the read-only paths, the writable dir. What it can
// write it cannot execute.
void plan_minimal_root(NamespaceSandbox::Plan& p, const NamespaceLayout& layout) {
  using Step = NamespaceSandbox::Plan::Step;
  namespace fs = std::filesystem;
  const std::string root = kNewRoot;
  p.minimal = true;
  p.old_root = root + "/.host-root";
  constexpr unsigned long kReadOnly = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
  constexpr unsigned long kScratch = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC;
  // The private mounts first: what is bound afterwards may lie under them (/tmp above all).
  p.steps.push_back({Step::kTmpfs, "", root + "/dev", MS_NOSUID | MS_NOEXEC, "mode=0755,size=1m"});
  for (const auto& d : layout.devices)
    p.steps.push_back({Step::kBindFile, d, root + d, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC});
  p.steps.push_back({Step::kTmpfs, "", root + "/dev/shm", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=1777"});
  p.steps.push_back({Step::kProc, "", root + "/proc", MS_NOSUID | MS_NODEV | MS_NOEXEC});
  p.steps.push_back({Step::kTmpfs, "", root + "/tmp", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=1777"});
  std::error_code ec;
  for (const auto& r : layout.read_only) {
    const fs::path path(r);
    if (fs::is_symlink(path, ec)) p.steps.push_back({Step::kSymlink, fs::read_symlink(path, ec).string(), root + r});
    else p.steps.push_back({fs::is_directory(path, ec) ? Step::kBindDir : Step::kBindFile, r, root + r, kReadOnly});
  }
  for (const auto& m : layout.masked) p.steps.push_back({Step::kMask, "/dev/null", root + m, kReadOnly});
  p.steps.push_back({Step::kBindDir, layout.writable_dir, root + layout.writable_dir, kScratch});
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
  if (layout.minimal_root) {
    plan_minimal_root(p, layout);
    return;
  }
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

}  // namespace mgk::sandboxing
