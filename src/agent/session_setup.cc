#include "agent/session_setup.h"

#include "common/env.h"

namespace mgk::agent {
namespace {

// Where shell-mode commands run: the running mgk first on PATH, the mgk tree and binaries
// readable, the harness found where this mgk finds it.
sandboxing::RunnerOptions shell_runner_options() {
  sandboxing::RunnerOptions o;
  const std::string path = env("PATH").value_or("/usr/local/bin:/usr/bin:/bin");
  o.extra_env["PATH"] = self_dir().string() + ":" + path;
  o.extra_env["MGK_ROOT"] = root_dir().string();
  o.read_only = {root_dir(), self_dir()};
  if (auto harness = env("MGK_HARNESS")) {
    o.extra_env["MGK_HARNESS"] = *harness;
    o.read_only.push_back(std::filesystem::path(*harness).parent_path());
  }
  return o;
}

}  // namespace

Topology topology_of(const eval::MachineInfo& m, int world, const std::optional<eval::Peaks>& peaks) {
  Topology t;
  t.world_size = world;
  if (!m.gpus.empty()) t.gpu_model = m.gpu_model();  // else the default: "unknown GPU"
  t.sm_count = m.gpus.empty() ? 0 : m.gpus.front().sms;
  if (!m.gpus.empty()) t.arch = eval::arch_for(m.gpus.front().cc);
  if (peaks && peaks->link_bytes_per_s > 0) {
    t.link_gbps = peaks->link_bytes_per_s / 1e9;
    t.link_source = "mgk calibrate";
  }
  return t;
}

AgentSetup build_session_setup(const PromptLibrary& prompts, const problems::Spec& spec,
                               const SessionChoices& c) {
  PromptInputs in;
  in.spec = &spec;
  in.world_size = c.world_size;
  in.topology = c.topology;
  in.texts = read_prompt_texts(spec);
  in.mode = c.mode;
  in.max_turns = c.limits.turns;
  in.command_timeout_s = c.command_timeout_s;
  const std::string group = " --world " + std::to_string(c.world_size) +
                            (c.shell_gpus.empty() ? "" : " --gpus " + c.shell_gpus) +
                            (c.compile_only ? " --compile-only" : "");
  in.eval_command = "mgk eval " + spec.name + " kernel.cu" + group;
  in.tune_command = "mgk tune " + spec.name + " kernel.cu" + group + " --out tuned.cu";
  // Shell mode: links in the sandbox (below), so that no host path is in the prompt.
  in.problem_dir = "problem/";
  in.primitives_dir = "primitives/";

  AgentSetup setup;
  setup.problem = spec.name;
  setup.mode = c.mode;
  setup.world_size = c.world_size;
  setup.limits = c.limits;
  setup.sampling = c.sampling;
  setup.prompt = build_initial_prompt(prompts, in);
  if (c.mode == Mode::kShell) {
    setup.sandbox_files = {{"reference.cu", in.texts.reference_source},
                           {"problem.md", render_problem(prompts, in)}};
    setup.sandbox_links = {{"problem", spec.dir}, {"primitives", root_dir() / "primitives"}};
    setup.runner = shell_runner_options();
  }
  setup.command_timeout_s = c.command_timeout_s;
  setup.config = {{"turns", c.limits.turns}, {"max_cost_usd", c.limits.max_cost_usd},
                  {"max_seconds", c.limits.max_seconds}, {"max_tokens", c.sampling.max_tokens},
                  {"gpus", c.gpus}};
  if (c.compile_only) setup.config["compile_only"] = true;
  if (c.sampling.temperature) setup.config["temperature"] = *c.sampling.temperature;
  if (c.sampling.reasoning_effort) setup.config["reasoning_effort"] = *c.sampling.reasoning_effort;
  return setup;
}

}  // namespace mgk::agent
