// The opening of a session: the system prompt (mode, machine, ABI, trade-offs, primitives,
// tuning markers, output contract) and the problem prompt (statement, tensors, sizes,
// tolerance, reference source), rendered from prompts/.
#pragma once
#include <optional>
#include <string>

#include "agent/config.h"
#include "agent/prompt_library.h"
#include "problems/spec.h"

namespace mgk::agent {

// The machine the kernel runs on, as the prompt describes it.
struct Topology {
  int world_size = 2;
  std::string gpu_model = "unknown GPU";
  int sm_count = 0;                  // 0: unknown
  std::optional<double> link_gbps;   // measured peer bandwidth, GB/s per direction
  std::string link_source;           // where the number comes from ("mgk calibrate, ...")
  std::string arch;                  // what kernels are compiled for ("sm_90a"); empty: sm_90a
};

// Files the prompts quote, read from the mgk root.
struct PromptTexts {
  std::string abi;               // src/abi/mgk/abi.h
  std::string primitives_guide;  // primitives/README.md
  std::string statement;         // the problem's statement.md
  std::string reference_source;  // the problem's reference.cu
};
// Throws mgk::Error naming a file that cannot be read.
PromptTexts read_prompt_texts(const problems::Spec& spec);

// A header as the model reads it: without the lines between "mgk-prompt: omit {" and
// "mgk-prompt: omit }" (maintainer notes, what only references use). Throws mgk::Error,
// naming `what` and the line, for markers that do not pair up.
std::string for_the_model(const std::string& text, const std::string& what);

struct PromptInputs {
  const problems::Spec* spec = nullptr;
  std::string dtype;   // empty: the problem's default
  int world_size = 2;
  Topology topology;
  PromptTexts texts;
  Mode mode = Mode::kRefine;
  int max_turns = kRefineTurns;
  // Shell mode only.
  double command_timeout_s = kCommandTimeoutS;
  std::string eval_command;     // e.g. "mgk eval collectives/all_reduce kernel.cu --world 2"
  std::string tune_command;
  std::string problem_dir, primitives_dir;  // as the model names them: links in its sandbox
};

struct InitialPrompt {
  std::string system;
  std::string user;
};

inline constexpr const char* kSubmitSentinel = "MGK_SUBMIT";

InitialPrompt build_initial_prompt(const PromptLibrary& prompts, const PromptInputs& in);

// The rendered problem prompt alone (also written to problem.md in a shell sandbox).
std::string render_problem(const PromptLibrary& prompts, const PromptInputs& in);

}  // namespace mgk::agent
