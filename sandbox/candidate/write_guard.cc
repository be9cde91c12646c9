#include "write_guard.h"

#include <fcntl.h>
#include <linux/landlock.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace mgk::sandbox {

namespace {

// Every kind of access that changes the file system, as far as the running kernel's Landlock
// knows them (later ABIs add kinds; asking for one it does not know is an error).
uint64_t write_accesses(int abi) {
  uint64_t a = LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |
               LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
               LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |
               LANDLOCK_ACCESS_FS_MAKE_SYM;
#ifdef LANDLOCK_ACCESS_FS_REFER
  if (abi >= 2) a |= LANDLOCK_ACCESS_FS_REFER;
#endif
#ifdef LANDLOCK_ACCESS_FS_TRUNCATE
  if (abi >= 3) a |= LANDLOCK_ACCESS_FS_TRUNCATE;
#endif
  return a;
}

WriteGuard not_enforced(const std::string& why) { return {false, "not enforced: " + why}; }

std::string error_text(int e) { return std::strerror(e); }

}  // namespace

WriteGuard restrict_writes(const std::vector<std::string>& writable) {
  const long abi = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
  if (abi < 0)
    return not_enforced(errno == ENOSYS || errno == EOPNOTSUPP
                            ? "this kernel has no Landlock (or it is disabled), so /proc/self/mem stays writable"
                            : "landlock: " + error_text(errno));
  const uint64_t handled = write_accesses(int(abi));
  landlock_ruleset_attr attr{};
  attr.handled_access_fs = handled;
  const int ruleset = int(::syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0));
  if (ruleset < 0) return not_enforced("landlock_create_ruleset: " + error_text(errno));
  std::string dirs;
  for (const auto& dir : writable) {
    const int fd = ::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) continue;
    landlock_path_beneath_attr beneath{};
    beneath.allowed_access = handled;
    beneath.parent_fd = fd;
    const long rc = ::syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &beneath, 0);
    const int e = errno;
    ::close(fd);
    if (rc != 0) {
      ::close(ruleset);
      return not_enforced("landlock_add_rule " + dir + ": " + error_text(e));
    }
    dirs += (dirs.empty() ? "" : ", ") + dir;
  }
  // Landlock needs no_new_privs (it could not be undone by a set-uid program otherwise);
  // the system-call filter sets it too, later.
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || ::syscall(SYS_landlock_restrict_self, ruleset, 0) != 0) {
    const int e = errno;
    ::close(ruleset);
    return not_enforced("landlock_restrict_self: " + error_text(e));
  }
  ::close(ruleset);
  return {true, "landlock ABI " + std::to_string(abi) + ": writes beneath " + dirs + " only"};
}

std::vector<std::string> candidate_writable_dirs() {
  std::vector<std::string> dirs = {"/dev"};
  char cwd[4096];
  if (::getcwd(cwd, sizeof cwd)) dirs.emplace_back(cwd);
  for (const char* var : {"HOME", "TMPDIR"})
    if (const char* v = std::getenv(var); v && v[0] == '/') dirs.emplace_back(v);
  std::sort(dirs.begin(), dirs.end());
  dirs.erase(std::unique(dirs.begin(), dirs.end()), dirs.end());
  return dirs;
}

}  // namespace mgk::sandbox
