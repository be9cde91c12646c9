// The one session builder: everything one agent session needs besides its collaborators,
// built from a problem and the user's choices: the opening prompt (rendered from prompts/),
// the shell sandbox's files and runner, the limits, and the config stored with the attempt.
// `mgk generate` builds one; `mgk bench` one per problem (its samples share it). The
// defaults of the choices are the agent's (agent/config.h).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "agent/agent.h"
#include "eval/machine.h"
#include "problems/spec.h"

namespace mgk::agent {

struct SessionChoices {
  Mode mode = Mode::kRefine;
  int world_size = 2;
  Limits limits;
  Sampling sampling;
  double command_timeout_s = kCommandTimeoutS;
  Topology topology;
  // Shell mode: the --gpus list the model's own `mgk eval` commands pass ("": none, the
  // first world_size visible GPUs), e.g. "0,0" where the ranks share one GPU.
  std::string shell_gpus;
  bool compile_only = false;  // the judge only compiles; the shell commands too
  std::vector<int> gpus;      // stored with the attempt (empty: chosen per evaluation)
};

// Throws mgk::Error naming a prompt file that cannot be read or rendered.
AgentSetup build_session_setup(const PromptLibrary& prompts, const problems::Spec& spec,
                               const SessionChoices& choices);

// The machine as the prompt describes it: GPU model and SMs from the probe, the link
// bandwidth from `mgk calibrate` when it was run.
Topology topology_of(const eval::MachineInfo& machine, int world_size,
                     const std::optional<eval::Peaks>& peaks);

}  // namespace mgk::agent
