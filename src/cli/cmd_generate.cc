// mgk generate: one problem, one model, one agent session; a line per turn, then the best
// kernel's path and the attempt id. --resume continues a stored attempt.
#include <cstdio>
#include <iostream>
#include <memory>

#include "agent/agent.h"
#include "agent/feedback.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "common/env.h"
#include "common/interrupt.h"
#include "common/log.h"
#include "common/env.h"
#include "process/run.h"
#include "eval/machine.h"
#include "llm/config.h"
#include "problems/catalog.h"
#include "tune/store_trial_cache.h"
#include "tune/tune_kernel.h"

namespace mgk::cli {
namespace {

struct GenerateArgs {
  std::string problem, model, mode = "refine", gpus, reasoning_effort;
  int turns = 0, world = 2, max_tokens = 16384;  // turns 0: the mode's default (or the stored one)
  double max_cost = 3.0, max_time = 0, temperature = 0, command_timeout = 600;
  bool temperature_given = false, tune = false, world_given = false;
  int64_t resume = 0;
};

std::string money(double usd) {
  char b[32];
  std::snprintf(b, sizeof b, "$%.4f", usd);
  return b;
}

std::string tokens(int64_t n) {
  char b[32];
  if (n >= 10000) std::snprintf(b, sizeof b, "%.1fk", double(n) / 1000);
  else std::snprintf(b, sizeof b, "%lld", static_cast<long long>(n));
  return b;
}

agent::Topology topology_of(const eval::MachineInfo& m, int world,
                            const std::optional<eval::Peaks>& peaks) {
  agent::Topology t;
  t.world_size = world;
  t.gpu_model = m.gpu_model();
  t.sm_count = m.gpus.empty() ? 0 : m.gpus.front().sms;
  if (peaks && peaks->link_bytes_per_s > 0) {
    t.link_gbps = peaks->link_bytes_per_s / 1e9;
    t.link_source = "mgk calibrate";
  }
  return t;
}

// Where shell-mode commands run: the running mgk first on PATH, the mgk tree and binaries
// readable, the harness found where this mgk finds it.
runner::RunnerOptions shell_runner_options() {
  runner::RunnerOptions o;
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

ExitCode exit_code_for(const agent::AttemptOutcome& o) {
  switch (o.reason) {
    case agent::ExitReason::kInterrupted: return ExitCode::kInterrupted;
    case agent::ExitReason::kApiError:
    case agent::ExitReason::kInfrastructure: return ExitCode::kInfrastructure;
    default: break;
  }
  if (o.best_kernel) return ExitCode::kOk;
  if (o.reason == agent::ExitReason::kCostLimit || o.reason == agent::ExitReason::kTimeLimit ||
      o.reason == agent::ExitReason::kTurnsExhausted)
    return ExitCode::kLimit;
  return ExitCode::kIncorrect;  // format errors, or submitted without a correct kernel
}

// Says before the first call how the model's replies will be billed.
void announce_price(const llm::Provider& provider) {
  auto p = provider.price();
  if (!p) {
    log::warning("no price is known for " + provider.name() +
                 ": its cost is not counted (shown as '?') and not limited");
  } else if (!p->exact) {
    char rates[96];
    std::snprintf(rates, sizeof rates, "$%g in / $%g out per million tokens", p->price.input,
                  p->price.output);
    log::info("pricing " + provider.name() + " as '" + p->entry + "' (" + rates + ")");
  }
}

void tune_best(const agent::AttemptOutcome& o, const eval::EvalOptions& eval_options,
               store::Store& store) {
  if (!o.best_kernel) {
    std::cout << "not tuned: no correct kernel\n";
    return;
  }
  tune::KernelTuneRequest req;
  req.eval = eval_options;
  req.eval.kernel = *o.best_kernel;
  req.out = o.sandbox_dir / "best.tuned.cu";
  req.on_trial = [](const tune::Trial& t, const tune::Config&) {
    std::cout << "  tune: " << tune::to_string(t.status) << (t.status == tune::TrialStatus::kOk
                                                                 ? " " + std::to_string(t.time_us) + " us"
                                                                 : std::string())
              << "\n";
  };
  tune::StoreTrialCache cache(store);
  try {
    tune::KernelTuneResult r = tune::tune_kernel(req, cache);
    if (r.best_kernel) std::cout << "tuned kernel: " << r.best_kernel->string() << "\n";
    else std::cout << "not tuned: " << r.report.message << "\n";
  } catch (const UsageError& e) {  // e.g. the kernel declares no tunables
    std::cout << "not tuned: " << e.what() << "\n";
  }
}

ExitCode run_generate(const GenerateArgs& a, const Globals& g) {
  store::Store store = open_store(g);
  std::string problem = a.problem, model = a.model, mode = a.mode;
  int world = a.world, turns = a.turns;
  int64_t run_id = 0;
  if (a.resume > 0) {
    auto s = store.attempt(a.resume);
    if (!s)
      throw NotFoundError("no attempt " + std::to_string(a.resume) + " in " + store.path().string() +
                          " ('mgk history' lists them)");
    if ((!problem.empty() && problem != s->problem) || (!model.empty() && model != s->model))
      throw UsageError("attempt " + std::to_string(a.resume) + " is " + s->problem + " with " + s->model +
                       "; leave --problem and --model out to resume it");
    problem = s->problem, model = s->model, mode = s->mode, world = s->world_size, run_id = s->run_id;
    if (turns == 0) turns = s->config.value("turns", 0);
  } else if (problem.empty() || model.empty()) {
    throw UsageError("give --problem and --model (or --resume ATTEMPT_ID)");
  }
  std::vector<int> gpus = parse_int_list(a.gpus, "--gpus");
  require_own_gpus(gpus, "generate");
  if (a.resume == 0) world = world_from(world, a.world_given, gpus);  // a resumed session keeps its world
  // A shell session needs many more steps than a refine session needs turns.
  if (turns == 0) turns = mode == "shell" ? 40 : 8;

  const problems::Spec spec = problems::load(problem);
  const agent::Mode agent_mode = agent::mode_from_string(mode);
  const agent::PromptLibrary prompts = agent::PromptLibrary::load_default();
  const llm::Config llm_config = llm::load_config();
  std::unique_ptr<llm::Provider> provider = llm::make_provider(model, llm_config);
  const agent::Limits limits{turns, a.max_cost, a.max_time, 3};
  agent::check_cost_limit(*provider, limits);  // before the GPU probe and any other wait
  announce_price(*provider);
  const eval::MachineInfo machine = eval::probe_machine();
  if (machine.gpus.empty())
    throw Error("no GPU to judge kernels on (" + machine.error + "); run 'mgk doctor'");
  const std::optional<eval::Peaks> peaks = stored_peaks(g, machine);

  eval::EvalOptions eval_options;
  eval_options.problem = problem;
  eval_options.world_size = world;
  eval_options.gpus = gpus;
  eval_options.peaks = peaks;
  agent::EvaluatorJudge judge(eval_options);

  agent::PromptInputs in;
  in.spec = &spec;
  in.world_size = world;
  in.topology = topology_of(machine, world, peaks);
  in.texts = agent::read_prompt_texts(spec);
  in.mode = agent_mode;
  in.max_turns = turns;
  in.command_timeout_s = a.command_timeout;
  const std::string group = " --world " + std::to_string(world) + (a.gpus.empty() ? "" : " --gpus " + a.gpus);
  in.eval_command = "mgk eval " + problem + " kernel.cu" + group;
  in.tune_command = "mgk tune " + problem + " kernel.cu" + group + " --out tuned.cu";
  in.problem_dir = spec.dir.string();
  in.primitives_dir = (root_dir() / "primitives").string();

  agent::AgentSetup setup;
  setup.problem = problem;
  setup.mode = agent_mode;
  setup.world_size = world;
  setup.limits = limits;
  setup.sampling.max_tokens = a.max_tokens;
  if (a.temperature_given) setup.sampling.temperature = a.temperature;
  if (!a.reasoning_effort.empty()) setup.sampling.reasoning_effort = a.reasoning_effort;
  setup.prompt = agent::build_initial_prompt(prompts, in);
  if (agent_mode == agent::Mode::kShell) {
    setup.sandbox_files = {{"reference.cu", in.texts.reference_source},
                           {"problem.md", agent::render_problem(prompts, in)}};
    setup.runner = shell_runner_options();
  }
  setup.command_timeout_s = a.command_timeout;
  setup.config = {{"turns", turns}, {"max_cost_usd", a.max_cost}, {"max_seconds", a.max_time},
                  {"max_tokens", a.max_tokens}, {"gpus", gpus}};
  if (setup.sampling.temperature) setup.config["temperature"] = *setup.sampling.temperature;
  if (setup.sampling.reasoning_effort) setup.config["reasoning_effort"] = *setup.sampling.reasoning_effort;

  if (run_id == 0)
    run_id = store.begin_run({"generate", model, {{"problem", problem}, {"mode", mode}, {"world", world}}});
  install_interrupt_handler();
  const std::atomic<bool>& interrupt = interrupt_flag();
  agent::Agent session(std::move(setup), {provider.get(), &judge, &store, &prompts, &interrupt});
  const bool priced = provider->price().has_value();
  auto cost = [priced](double usd) { return priced ? money(usd) : std::string("$?"); };
  session.on_turn = [&](const agent::TurnReport& t) {
    std::cout << "turn " << t.index + 1 << "/" << turns << "  " << t.action << "  " << t.outcome
              << "  tokens " << tokens(t.tokens_in) << " in / " << tokens(t.tokens_out) << " out  "
              << cost(t.cost_usd) << " (total " << cost(t.total_cost_usd) << ")" << std::endl;
  };
  log::info(std::string(a.resume ? "resuming" : "starting") + " " + problem + " with " + model + " (" + mode +
            " mode, " + std::to_string(world) + " ranks, prompts " + prompts.version() + ")");
  agent::AttemptOutcome out = a.resume ? session.resume(a.resume) : session.start(run_id);

  std::cout << "ended: " << agent::to_string(out.reason) << (out.message.empty() ? "" : ": " + out.message)
            << "  (" << out.turns << " turns, " << tokens(out.tokens_in) << " in / " << tokens(out.tokens_out)
            << " out, " << cost(out.cost_usd) << ")\n";
  if (out.final_result)
    std::cout << "final kernel.cu: " << agent::verdict_summary(*out.final_result) << "\n";
  if (out.best_kernel) {
    char speed[32];
    std::snprintf(speed, sizeof speed, "%.2fx", out.best_speedup.value_or(0));
    std::cout << "best kernel: " << out.best_kernel->string() << "  (slowest size " << speed << ")\n";
  } else {
    std::cout << "best kernel: none correct (files in " << out.sandbox_dir.string() << ")\n";
  }
  std::cout << "attempt " << out.attempt_id << "  ('mgk show " << out.attempt_id << "'"
            << (out.reason == agent::ExitReason::kInterrupted
                    ? ", 'mgk generate --resume " + std::to_string(out.attempt_id) + "'"
                    : std::string())
            << ")\n";
  const bool failed = out.reason == agent::ExitReason::kApiError ||
                      out.reason == agent::ExitReason::kInfrastructure;
  store.finish_run(run_id,
                   out.reason == agent::ExitReason::kInterrupted ? store::Status::kInterrupted
                   : failed                                      ? store::Status::kFailed
                                                                 : store::Status::kDone,
                   {{"attempt", out.attempt_id}, {"exit_reason", agent::to_string(out.reason)}});
  if (a.tune && out.reason != agent::ExitReason::kInterrupted) tune_best(out, eval_options, store);
  return exit_code_for(out);
}

}  // namespace

void add_generate_command(CLI::App& root, Globals& g) {
  auto a = std::make_shared<GenerateArgs>();
  CLI::App* c = root.add_subcommand("generate", "Have a model write a kernel for one problem, judged turn by turn");
  c->add_option("--problem", a->problem, "Problem name, e.g. collectives/all_reduce (see 'mgk problems')");
  c->add_option("--model", a->model, "provider:model, e.g. anthropic:claude-sonnet-4-5, openai:gpt-4o, vllm:qwen");
  c->add_option("--mode", a->mode, "refine (whole file per reply) or shell (one command per reply)")
      ->check(CLI::IsMember({"refine", "shell"}))
      ->capture_default_str();
  c->add_option("--turns", a->turns,
                "Model calls, resumed ones included (default: 8 in refine mode, 40 steps in shell mode)")
      ->check(at_least(1));
  c->add_option("--max-cost", a->max_cost,
                "Stop before a call once the attempt cost this many USD (0: no limit; a limit needs "
                "the model's price)")
      ->capture_default_str()
      ->check(at_least(0));
  c->add_option("--max-time", a->max_time, "Stop before a call after this many seconds (0: no limit)")
      ->check(at_least(0));
  add_group_options(c, &a->world, &a->world_given, &a->gpus);
  c->add_option("--temperature", a->temperature, "Sampling temperature (default: the provider's)")
      ->check(at_least(0))
      ->each([a](const std::string&) { a->temperature_given = true; });
  c->add_option("--max-tokens", a->max_tokens, "Output tokens per reply")
      ->capture_default_str()
      ->check(at_least(1));
  c->add_option("--reasoning-effort", a->reasoning_effort, "Passed to the provider: low, medium or high");
  c->add_option("--command-timeout", a->command_timeout, "Shell mode: seconds a command may run")
      ->capture_default_str()
      ->check(above(0));
  c->add_option("--resume", a->resume, "Continue a stored attempt (its problem, model and mode)");
  c->add_flag("--tune", a->tune, "Tune the best kernel's declared parameters at the end");
  c->callback([a, &g] { g.exit_code = run_generate(*a, g); });
}

}  // namespace mgk::cli
