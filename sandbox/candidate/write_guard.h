// Where the candidate process may write files: beneath its scratch and /dev, nowhere else,
// through Landlock. The sandbox's mounts already make the rest of its
// root read-only, but not /proc: a process may write its own memory through
// /proc/self/mem whatever the pages' protection, so with it the model's code could rewrite
// the timing stub's code or the dynamic linker's read-only tables without one refused
// system call. Landlock closes that (a write open of any file outside those directories
// fails with EACCES), on every isolation path, the unisolated one included.
//
// Landlock binds the calling thread and whatever it starts afterwards, not the threads that
// exist already: call it first thing, before the CUDA runtime starts its threads. A program
// that links this also gets thread_names.cc: the CUDA driver names its threads by writing
// /proc/self/task/TID/comm, which the guard refuses.
#pragma once
#include <string>
#include <vector>

namespace mgk::sandbox {

struct WriteGuard {
  bool enforced = false;
  // For the evaluation's report: "landlock ABI 4: writes beneath <dirs> only", or why not
  // ("not enforced: ..." when the kernel has no Landlock).
  std::string description;
};

// `writable`: absolute directories (those that do not exist are left out).
WriteGuard restrict_writes(const std::vector<std::string>& writable);

// The candidate process's: its scratch (its working directory; HOME and TMPDIR lie there)
// and /dev (the GPUs' nodes are opened for writing; its sandbox holds only those and the null
// devices). Not /tmp: unisolated, that is the host's.
std::vector<std::string> candidate_writable_dirs();

}  // namespace mgk::sandbox
