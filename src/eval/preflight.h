// What `generate` and `bench` check before their first paid model call: everything that
// would make every evaluation fail, found while it costs nothing. GPUs visible (unless
// compile-only), the harness there, nvcc working, and each problem's reference compiling
// (which also fills the compile cache the evaluations then hit; not under compile-only,
// where nothing runs).
#pragma once
#include <vector>

#include "eval/machine.h"
#include "problems/spec.h"

namespace mgk::eval {

struct PreflightOptions {
  bool compile_only = false;
  bool compile_references = true;  // false for --dry-run: the quick checks only
};

// Throws mgk::Error naming the first missing piece and what to do about it.
void preflight(const std::vector<problems::Spec>& specs, const eval::MachineInfo& machine,
               const PreflightOptions& options);

// Every problem's reference compiled (into the compile cache), as many at once as there are
// cores (each nvcc is one thread), with a progress line on a terminal. Throws mgk::Error
// naming the first that fails, in the problems' order.
void compile_references(const std::vector<problems::Spec>& specs, const std::string& arch);

// For --dry-run: the quick checks, with one line saying whether a real run would get past
// them (a dry run works without a GPU; it says what would stop the real one).
void report_preflight_for_dry_run(const std::vector<problems::Spec>& specs, const eval::MachineInfo& machine,
                                  bool compile_only);

// The nvcc target the evaluations will use on this machine ("" without a GPU: nvcc's default
// for mgk, sm_90a).
std::string evaluation_arch(const eval::MachineInfo& machine);

}  // namespace mgk::eval
