// How a sandboxed process is isolated: bubblewrap (bwrap) where it is installed and works,
// else the kernel's namespaces entered directly (sandboxing/namespaces.h, what `unshare` does),
// else nothing, with a warning that says so. Either way the process gets no network, a
// read-only view of the system with one writable directory (and a private /tmp and
// /dev/shm), the user's home hidden, its own PID namespace (it cannot see mgk's process or
// its environment), the GPUs' device nodes, and death with its parent; or, for the
// candidate process, a root of its own with only what it needs (minimal_root).
#pragma once
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "process/spawn.h"

namespace mgk::sandboxing {

class NamespaceSandbox;

struct BubblewrapStatus {
  bool usable = false;
  std::string program;  // the bwrap found on PATH, empty if none
  std::string problem;  // why it is not usable: one line
};

// Finds bwrap on `path_list` (colon-separated) and runs a trivial command in a sandbox with
// the same namespaces the real ones use.
BubblewrapStatus probe_bubblewrap(const std::string& path_list);

enum class IsolationKind { kBubblewrap, kNamespaces, kNone };
const char* to_string(IsolationKind k);

struct IsolationStatus {
  IsolationKind kind = IsolationKind::kNone;
  std::string bwrap;    // kBubblewrap: the program
  std::string problem;  // why bubblewrap (and, for kNone, the namespaces too) are not usable
};

// Bubblewrap when usable, else namespaces when a trial child can enter them, else none.
IsolationStatus probe_isolation(const std::string& path_list);
// probe_isolation on this process's PATH, once per process (thread-safe), cached.
const IsolationStatus& isolation_status();

// The warning printed when processes must run without isolation.
std::string unisolated_warning(const std::string& problem);

struct SandboxLayout {
  std::filesystem::path writable_dir;            // bound read-write; the working directory
  std::vector<std::filesystem::path> hidden;     // each replaced by an empty tmpfs
  std::vector<std::filesystem::path> read_only;  // bound read-only (after hiding)
  bool gpus = true;                              // bubblewrap: bind /dev/nvidia* (those that exist)
  // The candidate process's kind of root: instead of the host's whole filesystem read-only
  // (less `hidden`), an empty one holding only `read_only` (files or directories; a
  // symlink is made again as a symlink), `devices`, the writable dir, and a private /tmp,
  // /dev/shm and /proc. On the namespaces path nothing in its writable places can be
  // executed (bubblewrap cannot mount noexec; the system-call filter holds there).
  bool minimal_root = false;
  std::vector<std::filesystem::path> devices;  // minimal_root: the device nodes it sees
  // minimal_root: files under `read_only` it must not open (each covered by /dev/null on a
  // nodev mount, so an open fails): the libraries a candidate may not use.
  std::vector<std::filesystem::path> masked;
  // No capabilities at all, even as root: with them, a process could read the memory of
  // anything in its sandbox, remount, or leave its namespaces. A nested sandbox (mgk eval
  // inside a shell-mode command) then needs user namespaces; where they are not allowed it
  // runs without its own isolation, inside the outer one, and says so.
  bool drop_capabilities = true;
};

// The bwrap command line that runs a command inside `layout`; the command's argv follows.
std::vector<std::string> bubblewrap_prefix(const std::string& bwrap, const SandboxLayout& layout);

// One way to start processes inside a layout, prepared once: a bwrap prefix on argv, or a
// hook that enters namespaces in the child, or (kNone) neither.
class Sandbox {
 public:
  Sandbox(const IsolationStatus& how, const SandboxLayout& layout);
  ~Sandbox();
  Sandbox(const Sandbox&) = delete;
  Sandbox& operator=(const Sandbox&) = delete;

  IsolationKind kind() const { return kind_; }
  bool isolated() const { return kind_ != IsolationKind::kNone; }
  std::vector<std::string> command(const std::vector<std::string>& argv) const;  // prefix + argv
  process::ChildHook hook() const;  // valid while this Sandbox lives

 private:
  IsolationKind kind_;
  std::vector<std::string> prefix_;
  std::unique_ptr<NamespaceSandbox> namespaces_;
};

}  // namespace mgk::sandboxing
