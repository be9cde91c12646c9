#include "bench_run/station.h"

#include <algorithm>
#include <iostream>
#include <numeric>
#include <optional>

#include "agent/agent.h"
#include "agent/session_setup.h"
#include "bench_run/dry_run.h"
#include "common/error.h"
#include "common/interrupt.h"
#include "eval/calibration.h"
#include "eval/preflight.h"
#include "llm/config.h"
#include "problems/catalog.h"

namespace mgk::bench_run {
namespace {

void prepare(Station& p, const BenchSpec& s, const eval::MachineInfo& machine, const std::optional<eval::Peaks>& peaks,
                 const agent::PromptLibrary& prompts) {
  p.gpus = s.gpus;
  if (p.gpus.empty()) {
    p.gpus.resize(machine.gpus.size());
    std::iota(p.gpus.begin(), p.gpus.end(), 0);
  }
  if (!s.compile_only && !machine.gpus.empty())
    for (int g : p.gpus)
      if (g >= int(machine.gpus.size()))
        throw UsageError("--gpus names GPU " + std::to_string(g) + ", but " + std::to_string(machine.gpus.size()) +
                         " are visible (0.." + std::to_string(machine.gpus.size() - 1) +
                         "; check CUDA_VISIBLE_DEVICES)");
  for (const std::string& name : s.problem_list) {
    problems::Spec spec = problems::load(name);
    const int world = world_for(spec, s.world);
    agent::SessionChoices c;
    c.mode = agent::mode_from_string(s.mode);
    c.world_size = world;
    c.limits.turns = s.turns;
    c.limits.max_cost_usd = s.attempt_max_cost_usd;
    c.sampling.max_tokens = s.max_tokens;
    c.sampling.temperature = s.temperature;
    c.sampling.reasoning_effort = s.reasoning_effort;
    c.command_timeout_s = s.command_timeout_s;
    c.topology = agent::topology_of(machine, world, peaks);
    c.compile_only = s.compile_only;
    // Shell mode sees only its group (CUDA_VISIBLE_DEVICES): its ranks share where the
    // group has fewer GPUs than ranks.
    const size_t distinct = std::min(size_t(world), p.gpus.size());
    if (!s.compile_only && distinct < size_t(world)) {
      std::vector<int> relative(distinct);
      std::iota(relative.begin(), relative.end(), 0);
      c.shell_gpus = gpu_list(rank_gpus(world, relative));
    }
    ProblemSession ps;
    ps.setup = agent::build_session_setup(prompts, spec, c);
    ps.eval.plan = eval::plan_evaluation(spec, {}, "", world);
    ps.eval.peaks = peaks;
    ps.eval.compile_only = s.compile_only;
    p.sessions.emplace(name, std::move(ps));
    p.specs.push_back(std::move(spec));
  }
}

void print_dry_run_of(const BenchSpec& s, const Station& p, const eval::MachineInfo& machine,
                      const llm::Config& llm_config) {
  DryRun d;
  d.model = s.model;
  d.mode = s.mode;
  d.turns = s.turns;
  d.samples = s.samples;
  d.max_tokens = s.max_tokens;
  std::map<int, bool> worlds;
  for (const auto& [name, ps] : p.sessions) {
    d.problems.emplace_back(name, ps.eval.plan.world_size);
    worlds[ps.eval.plan.world_size] = true;
    d.first_prompts_chars +=
        static_cast<long long>(ps.setup.prompt.system.size() + ps.setup.prompt.user.size()) * s.samples;
  }
  const bool here = s.executor == "local";  // else the GPUs and the checks are the array tasks'
  for (const auto& [world, unused] : worlds) {
    std::vector<std::vector<int>> groups;
    if (!s.compile_only && !p.gpus.empty()) groups = GpuPool(p.gpus).groups(world);
    d.groups.push_back(!here && !s.compile_only ? std::to_string(world) + " ranks: on each array task's GPUs"
                       : s.compile_only || !p.gpus.empty() ? group_line(world, groups, s.compile_only)
                                                           : std::to_string(world) + " ranks: no GPU visible");
  }
  const auto& first = *p.sessions.begin();
  d.example = first.first + " sample 0";
  d.prompt = first.second.setup.prompt;
  d.llm = &llm_config;
  print_dry_run(std::cout, d);
  if (here) eval::report_preflight_for_dry_run(p.specs, machine, s.compile_only);
}

std::optional<eval::Peaks> peaks_for(const BenchSpec& spec, store::Store& store, const eval::MachineInfo& machine) {
  if (spec.compile_only) return std::nullopt;
  return eval::calibrated_peaks(store, machine);
}

}  // namespace

void check_cost_limits(const llm::Provider& provider, const BenchSpec& spec) {
  agent::check_cost_limits(provider,
                           {{"--attempt-max-cost", spec.attempt_max_cost_usd}, {"--max-cost", spec.max_cost_usd}});
}

Station set_up_station(const BenchSpec& spec, store::Store& store, const agent::PromptLibrary& prompts) {
  Station h;
  if (!spec.rejudge_of) {
    h.provider = llm::make_provider(spec.model, llm::load_config());
    check_cost_limits(*h.provider, spec);
  }
  const eval::MachineInfo machine = eval::probe_machine();
  prepare(h, spec, machine, peaks_for(spec, store, machine), prompts);
  eval::preflight(h.specs, machine, {spec.compile_only, true});
  throw_if_interrupted();  // Ctrl-C while the references compiled: no run is begun
  if (!spec.compile_only) h.pool = std::make_unique<GpuPool>(h.gpus);
  return h;
}

void print_dry_run(const BenchSpec& spec, store::Store& store, const agent::PromptLibrary& prompts) {
  const eval::MachineInfo machine = eval::probe_machine();
  Station p;
  prepare(p, spec, machine, peaks_for(spec, store, machine), prompts);
  print_dry_run_of(spec, p, machine, llm::load_config());
}

std::string title_of(const std::string& what, const BenchSpec& spec, const Station& station) {
  return what + ": " + spec.model + ", " + spec.mode + ", " + std::to_string(spec.problem_list.size()) +
         " problem(s) x " + std::to_string(spec.samples) + " sample(s), " + std::to_string(spec.jobs) + " job(s)" +
         (spec.compile_only ? ", compile only" : ", GPUs " + gpu_list(station.gpus));
}

}  // namespace mgk::bench_run
