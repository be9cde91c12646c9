// mgk generate: one model, one problem, one agent session. This file is its flags;
// generate/run.h is the session.
#include <memory>

#include "cli/commands.h"
#include "cli/options.h"
#include "cli/session_flags.h"
#include "generate/run.h"

namespace mgk::cli {
namespace {

// --gpus as typed: generate::Request holds the parsed list.
struct GenerateFlags {
  generate::Request request;
  std::string gpus;
};

}  // namespace

void add_generate_command(CLI::App& root, Globals& g) {
  auto flags = std::make_shared<GenerateFlags>();
  generate::Request* a = &flags->request;
  CLI::App* c = root.add_subcommand("generate", "Have a model write a kernel for one problem, judged turn by turn");
  c->add_option("--problem", a->problem, "Problem name, e.g. collectives/all_reduce (see 'mgk problems')");
  c->add_option("--model", a->model, "provider:model, e.g. anthropic:claude-sonnet-4-5, openai:gpt-4o, vllm:qwen");
  c->add_option("--mode", a->mode, "refine (whole file per reply) or shell (one command per reply)")
      ->check(CLI::IsMember({"refine", "shell"}))
      ->capture_default_str();
  c->add_option("--turns", a->turns,
                "Model calls, resumed ones included (default: " + std::to_string(agent::kRefineTurns) +
                    " in refine mode, " + std::to_string(agent::kShellSteps) + " steps in shell mode)")
      ->check(at_least(1));
  add_cost_option(c, "--max-cost", &a->session.limits.max_cost_usd,
                  "Stop before a call that could take the attempt past this many USD (0: no limit; a limit "
                  "needs the model's price)");
  c->add_option("--max-time", a->session.limits.max_seconds, "Stop before a call after this many seconds (0: no limit)")
      ->check(at_least(0));
  add_group_options(c, &a->world, &a->world_given, &flags->gpus);
  add_sampling_options(c, {&a->session.sampling.max_tokens, &a->temperature, &a->temperature_given,
                           &a->reasoning_effort, &a->session.command_timeout_s});
  c->add_option("--resume", a->resume, "Continue a stored attempt (its problem, model and mode)");
  c->add_flag("--tune", a->tune, "Tune the best kernel's declared parameters at the end");
  c->add_flag("--compile-only", a->compile_only, "The judge only compiles (no GPU needed; nothing is checked)");
  CLI::Option* dry_run = c->add_flag("--dry-run", a->dry_run,
                                     "Print the first prompt, the GPU group and a token estimate; call no model");
  c->add_flag("--json", a->json,
              "Each turn and the end as JSON lines ({\"event\": \"turn\" | \"tune_trial\" | \"tuned\" | \"ended\" | "
              "\"finished\", ...}; unknown costs null)")
      ->excludes(dry_run);
  c->callback([flags, c, &g] {
    generate::Request& r = flags->request;
    r.gpus = parse_int_list(flags->gpus, "--gpus");
    if (r.resume == 0) r.world = world_from(r.world, r.world_given, r.gpus);  // a resumed session keeps its world
    for (const char* flag : {"--max-cost", "--max-time", "--max-tokens", "--reasoning-effort"})
      if (c->count(flag)) r.given.insert(flag);
    store::Store store = open_store(g);
    g.exit_code = generate::run(r, store);
  });
}

}  // namespace mgk::cli
