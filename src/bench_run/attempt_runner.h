// One attempt of a bench on this machine: the agent session of a work item (started, or
// continued from the store), with the model calls and evaluations reported per worker. In
// refine mode each evaluation takes a GPU group from the pool; in shell mode the attempt
// holds one group for its whole length, since the model's own commands evaluate on it
// (they see only that group, through CUDA_VISIBLE_DEVICES).
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "agent/agent.h"
#include "bench_run/gpu_pool.h"
#include "bench_run/work_list.h"
#include "eval/evaluate.h"

namespace mgk::bench_run {

// What every sample of one problem shares.
struct ProblemSession {
  agent::AgentSetup setup;  // the opening prompt, limits, sandbox files (sample set per attempt)
  eval::EvalOptions eval;   // problem, world size, compile_only, peaks; GPUs come per lease
};

struct AttemptDeps {
  llm::Provider* provider = nullptr;
  store::Store* store = nullptr;
  const agent::PromptLibrary* prompts = nullptr;
  GpuPool* gpus = nullptr;  // null with --compile-only
  const std::atomic<bool>* interrupt = nullptr;
  const std::atomic<bool>* stop = nullptr;  // the budget: end before the next model call
  agent::SharedBudget* budget = nullptr;    // the run's, which every call holds its worst case in
};

struct AttemptHooks {
  std::function<void(const std::string&)> status;  // what the worker does now ("" when idle)
  std::function<void(const agent::TurnReport&)> on_turn;
};

class AttemptRunner {
 public:
  AttemptRunner(int64_t run_id, std::map<std::string, ProblemSession> sessions, AttemptDeps deps);
  // Runs the item's attempt until it ends or the run stops; returns its stored id. Errors
  // of the attempt propagate (the agent has marked it failed).
  int64_t run(const WorkItem& item, const AttemptHooks& hooks) const;

 private:
  int64_t run_id_;
  std::map<std::string, ProblemSession> sessions_;
  AttemptDeps deps_;
};

// CUDA_VISIBLE_DEVICES naming these GPUs (indices as this process sees them, so an
// inherited CUDA_VISIBLE_DEVICES is mapped through).
std::string visible_devices(const std::vector<int>& gpus);

}  // namespace mgk::bench_run
