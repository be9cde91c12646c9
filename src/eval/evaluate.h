// The evaluator's entry point: compile a kernel file, run it with the problem's reference
// on every GPU of a group, judge it and time it. Used by `mgk eval`, the tuner and the agent.
#pragma once
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "eval/compile.h"
#include "eval/machine.h"
#include "eval/plan.h"
#include "problems/spec.h"
#include "results/eval_result.h"

namespace mgk::eval {

struct EvalOptions {
  // The problem resolved at its world, presets and dtype (plan_evaluation), once by the
  // command; nothing below resolves or loads it again.
  EvalPlan plan;
  std::filesystem::path kernel;         // the candidate .cu file
  std::string kernel_shown_as;          // how compile messages name it; empty: `kernel` as given
  bool kernel_is_reference = false;     // evaluate the problem's reference as the candidate
  std::vector<int> gpus;                // empty: the first plan.world_size visible GPUs
  std::vector<std::string> defines;     // extra -DNAME=VALUE for the candidate (the tuner)
  std::vector<std::string> nvcc_flags;  // extra flags passed through to nvcc
  std::string arch;                     // empty: detected from the GPU, else sm_90a
  int trials = 3;                       // correctness trials per size, fresh inputs each
  int back_to_back = 8;                 // calls in a row with no barrier between them (0: skip)
  int timing_iterations = 100;          // per solution, per size
  // Timed calls per timing block whose outputs are judged, drawn fresh per block so the
  // candidate cannot predict them (eval/timed_checks.h). 0: none.
  int timed_checks = 3;
  bool time = true;                     // false: correctness only
  bool compile_only = false;
  // After a size fails, check the sizes after it too (to see every size a kernel fails at,
  // e.g. that a degenerate output fails at each); false: stop at the first failing size.
  bool keep_going = false;
  double timeout_seconds = 20;          // watchdog per phase
  std::optional<Peaks> peaks;           // from `mgk calibrate`; absent: no roofline fraction
  std::filesystem::path work_dir;       // rank logs and sockets; empty: a fresh temp dir
  // What the evaluation is doing now ("compiling the candidate", "size small: trial 2/3"),
  // for a progress line; unset: nothing is reported.
  std::function<void(const std::string&)> progress;
};

// True when two ranks of the group are on the same GPU (e.g. --gpus 0,0). The ranks then
// time-slice the GPU: the candidate is checked (trials, back-to-back calls) but neither run
// nor timed against NCCL, which refuses such a group. For checking multi-GPU code, at any
// world size, on a machine with fewer GPUs: indexing, counts, epochs, deadlocks. Not
// races: the ranks never run at the same time, so a missing fence can pass here.
bool ranks_share_gpu(const std::vector<int>& gpus);

// Never throws for anything the kernel did: that is in the verdict. Throws mgk::Error for
// bad options (unknown problem: UsageError) and for infrastructure failures it can name.
results::EvalResult evaluate(const EvalOptions& options);

// For the tuner and the agent: compile the candidate `options` describe (into the cache).
CompileResult compile_candidate(const EvalOptions& options);

}  // namespace mgk::eval
