// The system-call filter of the candidate process (seccomp-bpf, through libseccomp). The
// model's code shares that process, so reading its source or its imports cannot bound what
// it does at run time: code it finds in memory (libc's own functions, a `syscall`
// instruction hidden in data) reaches the kernel all the same. The filter is what makes the
// rules hold. It is installed on every thread of the process (the CUDA driver's included)
// before the candidate's library is loaded and lasts for the process's life; a call it
// refuses ends the process with a line naming the call (wire/candidate_exit.h).
//
// It lets through what the CUDA runtime and driver need (threads, memory, ioctl on the
// device nodes, futexes, files) and nothing else: no processes, sockets, ptrace or
// process_vm_*, mounts or namespaces, signals to other processes, no new handler for the
// signal it reports with, no anonymous executable memory and no mprotect to executable.
// Executable mappings of files stay allowed, whenever they come: the dynamic loader makes
// them, and the CUDA driver loads parts of itself only at a process's first kernel launch
// (on the H200, a filter that refused them after the candidate's library was in refused
// every plain candidate). Where the candidate can write (its scratch, /tmp) the namespaces
// path mounts noexec, so such a file is the system's own code.
#pragma once
#include <string>
#include <vector>

namespace mgk::sandbox {

// Installs the filter on every thread of this process, and the SIGSYS handler that names a
// refused call. Throws std::runtime_error when the kernel refuses it.
void install_syscall_filter();

// What the filter refuses, class by class, in the words a refusal uses: for the prompt and
// the documentation, so that what the model is told and what is enforced are one table.
struct RefusedCallClass {
  std::string what;                 // "starting processes"
  std::string why;                  // "candidates may not start processes"
  std::string rule;                 // its class in src/eval/candidate_rules.h: "processes"
  std::vector<std::string> calls;   // the system calls of the class, by name (none: the rest)
};
const std::vector<RefusedCallClass>& refused_call_classes();

}  // namespace mgk::sandbox
