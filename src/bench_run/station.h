// This machine ready to run a spec's attempts: each problem's session prepared (its first
// prompt, how it is judged), the model's provider (a missing key stops here), the pre-flight
// passed (GPUs, nvcc, the references compiling) and the GPU pool the judges draw from.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "agent/prompt_library.h"
#include "bench_run/attempt_runner.h"
#include "bench_run/bench_spec.h"
#include "bench_run/gpu_pool.h"
#include "llm/provider.h"
#include "problems/spec.h"
#include "store/store.h"

namespace mgk::bench_run {

struct Station {
  std::vector<problems::Spec> specs;
  std::map<std::string, ProblemSession> sessions;  // by problem
  std::vector<int> gpus;                           // what the pool hands out
  std::unique_ptr<llm::Provider> provider;         // null for a rejudge: no model is called
  std::unique_ptr<GpuPool> pool;                   // null with --compile-only
};

// Throws mgk::Error (UsageError for what the user can fix) naming what is missing. The
// roofline peaks are the store's latest calibration of this machine.
Station set_up_station(const BenchSpec& spec, store::Store& store, const agent::PromptLibrary& prompts);

// --dry-run: the attempts, GPU groups, one first prompt and the token estimate (bench/dry_run.h),
// then the pre-flight's quick checks when the attempts would run here.
void print_dry_run(const BenchSpec& spec, store::Store& store, const agent::PromptLibrary& prompts);

// An unpriced model with a cost limit: refused before any run exists (a local vLLM or
// Ollama model is exactly this case; --attempt-max-cost 0 runs it).
void check_cost_limits(const llm::Provider& provider, const BenchSpec& spec);

// "mgk bench run 3: openai:gpt-4o, refine, 8 problem(s) x 2 sample(s), 4 job(s), GPUs 0,1".
std::string title_of(const std::string& what, const BenchSpec& spec, const Station& station);

}  // namespace mgk::bench_run
