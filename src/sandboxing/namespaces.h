// Isolation without bubblewrap: the namespaces the kernel gives (as `unshare` uses them),
// entered by the child between fork and exec. The child gets its own mount, network, PID,
// IPC and UTS namespaces (plus a user namespace when mgk does not run as root): the whole
// filesystem read-only but for one directory, a private /tmp and /dev/shm, its own /proc
// (it sees no other process, so no other process's environment), some paths hidden under
// empty tmpfs, no network but a loopback that is down, and optionally no capabilities. Or,
// for the candidate process, a root of its own with only what it needs (minimal_root).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "process/spawn.h"

namespace mgk::sandboxing {

struct NamespaceLayout {
  std::string writable_dir;              // bound read-write; the working directory
  std::vector<std::string> hidden;       // each covered by an empty tmpfs
  std::vector<std::string> read_only;    // bound back read-only when under a hidden path
  bool drop_capabilities = true;         // no capabilities at all, even as root
  // A root of its own holding only `read_only` (read-only; symlinks made again), `devices`,
  // the writable dir and a private /tmp, /dev/shm and /proc, the writable ones noexec: the
  // candidate process's (SandboxLayout::minimal_root). `hidden` is then unused.
  bool minimal_root = false;
  std::vector<std::string> devices;
  std::vector<std::string> masked;  // minimal_root: files under read_only covered by /dev/null (nodev)
};

// Everything the child needs, computed in the parent (the child must not allocate).
class NamespaceSandbox {
 public:
  explicit NamespaceSandbox(NamespaceLayout layout);
  ~NamespaceSandbox();
  NamespaceSandbox(const NamespaceSandbox&) = delete;
  NamespaceSandbox& operator=(const NamespaceSandbox&) = delete;

  // Valid while this object lives.
  process::ChildHook hook() const;

  struct Plan;  // the prepared C strings and flags

 private:
  std::unique_ptr<Plan> plan_;
};

}  // namespace mgk::sandboxing
