// mgk generate: one problem, one model, one agent session; a line per turn, then the best
// kernel's path and the attempt id (--json: the same as JSON lines). --resume continues a
// stored attempt; --dry-run shows the first prompt and calls nothing. With fewer GPUs than
// ranks the ranks share them: kernels are checked, not timed, and the model is told so.
#include <cstdio>
#include <iostream>
#include <memory>
#include <numeric>
#include <set>

#include "agent/agent.h"
#include "agent/feedback.h"
#include "agent/session_setup.h"
#include "bench/gpu_pool.h"
#include "cli/commands.h"
#include "cli/dry_run.h"
#include "cli/options.h"
#include "cli/preflight.h"
#include "cli/session_flags.h"
#include "common/env.h"
#include "common/interrupt.h"
#include "common/log.h"
#include "eval/machine.h"
#include "llm/config.h"
#include "problems/catalog.h"
#include "tune/store_trial_cache.h"
#include "tune/tune_kernel.h"

namespace mgk::cli {
namespace {

// The session's limits, sampling and command timeout are bound straight into `session`,
// so their defaults are the agent's (agent/config.h); turns 0: the mode's default, or the
// stored attempt's.
struct GenerateArgs {
  std::string problem, model, mode = "refine", gpus, reasoning_effort;
  int turns = 0, world = 2;
  double temperature = 0;
  agent::SessionChoices session;
  bool temperature_given = false, tune = false, world_given = false, compile_only = false, dry_run = false,
       json = false;
  int64_t resume = 0;
  std::set<std::string> given;  // the session flags on the command line (a resume keeps the others)
};

// A resumed session samples and stops as it began: the stored attempt's limits and sampling
// stand for every flag the command line leaves out.
void keep_stored_session(const nlohmann::json& stored, GenerateArgs& a) {
  auto keep = [&](const char* flag, const char* key, auto& value) {
    if (!a.given.count(flag) && stored.contains(key) && !stored[key].is_null())
      value = stored[key].get<std::decay_t<decltype(value)>>();
  };
  keep("--max-cost", "max_cost_usd", a.session.limits.max_cost_usd);
  keep("--max-time", "max_seconds", a.session.limits.max_seconds);
  keep("--max-tokens", "max_tokens", a.session.sampling.max_tokens);
  keep("--reasoning-effort", "reasoning_effort", a.reasoning_effort);
  if (stored.value("compile_only", false)) a.compile_only = true;
  if (!a.temperature_given && stored.contains("temperature")) {
    a.temperature = stored["temperature"].get<double>();
    a.temperature_given = true;
  }
}

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

// The GPU of each rank: --gpus as given (a GPU named twice makes ranks share it), else one
// visible GPU per rank, else the visible ones shared round robin (checked, not timed).
std::vector<int> rank_gpus_for(const std::vector<int>& given, int world, const eval::MachineInfo& machine,
                               bool compile_only) {
  if (!given.empty() || compile_only) return given;
  std::vector<int> visible(machine.gpus.size());
  std::iota(visible.begin(), visible.end(), 0);
  return bench::rank_gpus(world, visible);
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

// What generate prints: a line of text, or with --json the same as one JSON object a line
// (flushed: progress is shown as it happens, also through a pipe).
struct Printer {
  bool json = false;
  void operator()(const std::string& text, const nlohmann::json& event) const {
    if (json) std::cout << event.dump() << std::endl;
    else std::cout << text << std::endl;
  }
};

nlohmann::json usd_or_null(bool priced, double usd) { return priced ? nlohmann::json(usd) : nlohmann::json(nullptr); }

// Tunes the best kernel; false when Ctrl-C stopped the tuning.
bool tune_best(const agent::AttemptOutcome& o, const eval::EvalOptions& eval_options, store::Store& store,
               const Printer& print) {
  auto not_tuned = [&](const std::string& why) {
    print("not tuned: " + why, {{"event", "tuned"}, {"kernel", nullptr}, {"why", why}});
  };
  if (!o.best_kernel) {
    not_tuned("no correct kernel");
    return true;
  }
  if (eval::ranks_share_gpu(eval_options.gpus) || eval_options.compile_only) {
    not_tuned(std::string(eval_options.compile_only ? "compile only" : "ranks share a GPU") +
              ", so nothing can be timed");
    return true;
  }
  tune::KernelTuneRequest req;
  req.eval = eval_options;
  req.eval.kernel = *o.best_kernel;
  req.out = o.sandbox_dir / "best.tuned.cu";
  req.on_trial = [&print](const tune::Trial& t, const tune::Config&) {
    const bool ok = t.status == tune::TrialStatus::kOk;
    print(std::string("  tune: ") + tune::to_string(t.status) + (ok ? " " + std::to_string(t.time_us) + " us" : ""),
          {{"event", "tune_trial"},
           {"status", tune::to_string(t.status)},
           {"time_us", ok ? nlohmann::json(t.time_us) : nlohmann::json(nullptr)}});
  };
  tune::StoreTrialCache cache(store);
  try {
    tune::KernelTuneResult r = tune::tune_kernel(req, cache);
    if (r.best_kernel)
      print("tuned kernel: " + r.best_kernel->string(), {{"event", "tuned"}, {"kernel", r.best_kernel->string()}});
    else
      not_tuned(r.report.message);
    return r.report.stop != tune::StopReason::kInterrupted;
  } catch (const UsageError& e) {  // e.g. the kernel declares no tunables
    not_tuned(e.what());
    return true;
  }
}

// The session's end: how it ended, the final kernel's verdict, the best kernel, the attempt.
void print_outcome(const agent::AttemptOutcome& out, int64_t run_id, bool priced, const Printer& print) {
  const std::string cost = priced ? money(out.cost_usd) : "$?";
  const bool interrupted = out.reason == agent::ExitReason::kInterrupted;
  if (print.json) {
    print("", {{"event", "ended"}, {"attempt", out.attempt_id}, {"run", run_id},
               {"exit_reason", agent::to_string(out.reason)}, {"message", out.message}, {"turns", out.turns},
               {"tokens_in", out.tokens_in}, {"tokens_out", out.tokens_out},
               {"cost_usd", usd_or_null(priced, out.cost_usd)},
               {"final_verdict", out.final_result ? nlohmann::json(eval::to_string(out.final_result->verdict))
                                                  : nlohmann::json(nullptr)},
               {"best_kernel", out.best_kernel ? nlohmann::json(out.best_kernel->string()) : nlohmann::json(nullptr)},
               {"best_speedup", out.best_speedup ? nlohmann::json(*out.best_speedup) : nlohmann::json(nullptr)},
               {"sandbox", out.sandbox_dir.string()}, {"resumable", interrupted}});
    return;
  }
  std::cout << "ended: " << agent::to_string(out.reason) << (out.message.empty() ? "" : ": " + out.message)
            << "  (" << out.turns << " turns, " << tokens(out.tokens_in) << " in / " << tokens(out.tokens_out)
            << " out, " << cost << ")\n";
  if (out.final_result)
    std::cout << "final kernel.cu: " << agent::verdict_summary(*out.final_result) << "\n";
  if (out.best_kernel) {
    char speed[64] = "not timed: ranks share a GPU";
    if (out.best_speedup) std::snprintf(speed, sizeof speed, "slowest size %.2fx", *out.best_speedup);
    std::cout << "best kernel: " << out.best_kernel->string() << "  (" << speed << ")\n";
  } else {
    std::cout << "best kernel: none correct (files in " << out.sandbox_dir.string() << ")\n";
  }
  std::cout << "attempt " << out.attempt_id << "  ('mgk show " << out.attempt_id << "'"
            << (interrupted ? ", 'mgk generate --resume " + std::to_string(out.attempt_id) + "'" : std::string())
            << ")\n";
}

ExitCode run_generate(GenerateArgs a, const Globals& g) {
  store::Store store = open_store(g);
  std::string problem = a.problem, model = a.model, mode = a.mode;
  int world = a.world, turns = a.turns;
  int64_t run_id = 0;
  const Printer print{a.json};
  if (a.resume > 0) {
    const store::AttemptSummary s = agent::resumable_attempt(store, a.resume, {problem, model, std::nullopt});
    problem = s.problem, model = s.model, mode = s.mode, world = s.world_size, run_id = s.run_id;
    if (s.status == store::Status::kDone && turns <= s.turns) {  // finished: extended only when asked
      const std::string id = std::to_string(a.resume);
      print("attempt " + id + " is finished (" + s.exit_reason + " after " + std::to_string(s.turns) +
                " turn(s)): nothing to resume; 'mgk show " + id + "' shows it, --turns " +
                std::to_string(s.turns + 1) + " (or more) gives it more turns",
            {{"event", "finished"}, {"attempt", a.resume}, {"exit_reason", s.exit_reason}, {"turns", s.turns}});
      return ExitCode::kOk;
    }
    if (turns == 0) turns = s.config.value("turns", 0);
    keep_stored_session(s.config, a);
  } else if (problem.empty() || model.empty()) {
    throw UsageError("give --problem and --model (or --resume ATTEMPT_ID)");
  }
  const std::vector<int> given_gpus = parse_int_list(a.gpus, "--gpus");
  if (a.resume == 0) world = world_from(world, a.world_given, given_gpus);  // a resumed session keeps its world
  if (world < 1) throw UsageError("--world must be at least 1");
  const problems::Spec spec = problems::load(problem);
  const agent::Mode agent_mode = agent::mode_from_string(mode);
  if (turns == 0) turns = agent::default_turns(agent_mode);
  const agent::PromptLibrary prompts = agent::PromptLibrary::load_default();
  const llm::Config llm_config = llm::load_config();
  install_interrupt_handler();  // Ctrl-C from the GPU probe on: exit 130, nothing left running
  const eval::MachineInfo machine = eval::probe_machine();
  const std::vector<int> gpus = rank_gpus_for(given_gpus, world, machine, a.compile_only);
  const bool shared = eval::ranks_share_gpu(gpus);
  const std::optional<eval::Peaks> peaks = a.compile_only ? std::nullopt : stored_peaks(g, machine);

  eval::EvalOptions eval_options;
  eval_options.problem = problem;
  eval_options.world_size = world;
  eval_options.gpus = gpus;
  eval_options.peaks = peaks;
  eval_options.compile_only = a.compile_only;
  agent::EvaluatorJudge judge(eval_options);

  agent::SessionChoices choices = a.session;  // limits, sampling, command timeout from the flags
  choices.mode = agent_mode;
  choices.world_size = world;
  choices.limits.turns = turns;
  if (a.temperature_given) choices.sampling.temperature = a.temperature;
  if (!a.reasoning_effort.empty()) choices.sampling.reasoning_effort = a.reasoning_effort;
  choices.topology = agent::topology_of(machine, world, peaks);
  // The model's own commands name the GPUs only where the ranks share them or were chosen.
  choices.shell_gpus = a.gpus.empty() && !shared ? "" : bench::gpu_list(gpus);
  choices.compile_only = a.compile_only;
  choices.gpus = gpus;
  agent::AgentSetup setup = agent::build_session_setup(prompts, spec, choices);

  if (a.dry_run) {
    DryRun d;
    d.model = model;
    d.mode = mode;
    d.turns = turns;
    d.max_tokens = choices.sampling.max_tokens;
    d.problems = {{problem, world}};
    d.groups = {group_line(world, {gpus}, a.compile_only)};
    d.example = problem;
    d.prompt = setup.prompt;
    d.first_prompts_chars = static_cast<long long>(setup.prompt.system.size() + setup.prompt.user.size());
    d.llm = &llm_config;
    print_dry_run(std::cout, d);
    report_preflight_for_dry_run({spec}, machine, a.compile_only);
    return ExitCode::kOk;
  }
  std::unique_ptr<llm::Provider> provider = llm::make_provider(model, llm_config);  // a missing key, at once
  agent::check_cost_limit(*provider, choices.limits);  // an unpriced model with a cost limit, at once
  announce_price(*provider);
  // Everything that would fail every evaluation is found before the first paid call.
  preflight({spec}, machine, {a.compile_only, true});
  if (shared)
    log::info("ranks share a GPU (" + bench::gpu_list(gpus) + "): kernels are checked for correctness, not timed");

  if (run_id == 0)
    run_id = store.begin_run({"generate", model, {{"problem", problem}, {"mode", mode}, {"world", world}}});
  const std::atomic<bool>& interrupt = interrupt_flag();
  agent::Agent session(std::move(setup), {provider.get(), &judge, &store, &prompts, &interrupt});
  const bool priced = provider->price().has_value();
  auto cost = [priced](double usd) { return priced ? money(usd) : std::string("$?"); };
  session.on_turn = [&](const agent::TurnReport& t) {
    print("turn " + std::to_string(t.index + 1) + "/" + std::to_string(turns) + "  " + agent::to_string(t.action) +
              "  " + t.outcome + "  tokens " + tokens(t.tokens_in) + " in / " + tokens(t.tokens_out) + " out  " +
              cost(t.cost_usd) + " (total " + cost(t.total_cost_usd) + ")",
          {{"event", "turn"}, {"turn", t.index + 1}, {"turns", turns}, {"action", agent::to_string(t.action)},
           {"outcome", t.outcome}, {"tokens_in", t.tokens_in}, {"tokens_out", t.tokens_out},
           {"cost_usd", usd_or_null(priced, t.cost_usd)}, {"total_cost_usd", usd_or_null(priced, t.total_cost_usd)}});
  };
  log::info(std::string(a.resume ? "resuming" : "starting") + " " + problem + " with " + model + " (" + mode +
            " mode, " + std::to_string(world) + " ranks, prompts " + prompts.version() + ")");
  agent::AttemptOutcome out = a.resume ? session.resume(a.resume) : session.start(run_id);

  print_outcome(out, run_id, priced, print);
  store.finish_run(run_id, agent::status_of(out.reason),
                   {{"attempt", out.attempt_id}, {"exit_reason", agent::to_string(out.reason)}});
  if (a.tune && out.reason != agent::ExitReason::kInterrupted && !tune_best(out, eval_options, store, print))
    return ExitCode::kInterrupted;  // the session's outcome is stored; the tuning's trials are cached
  const ExitCode code = exit_code_for(out);
  // --compile-only: a kernel that compiled is all it can find, so it ends as `eval
  // --compile-only` does (0), unless the session was cut short.
  if (a.compile_only && (code == ExitCode::kLimit || code == ExitCode::kIncorrect))
    for (const store::EvaluationRecord& e : store.evaluations_of_run(run_id))
      if (e.attempt_id == out.attempt_id && e.verdict == "compiled") return ExitCode::kOk;
  return code;
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
                "Model calls, resumed ones included (default: " + std::to_string(agent::kRefineTurns) +
                    " in refine mode, " + std::to_string(agent::kShellSteps) + " steps in shell mode)")
      ->check(at_least(1));
  add_cost_option(c, "--max-cost", &a->session.limits.max_cost_usd,
                  "Stop before a call that could take the attempt past this many USD (0: no limit; a limit "
                  "needs the model's price)");
  c->add_option("--max-time", a->session.limits.max_seconds, "Stop before a call after this many seconds (0: no limit)")
      ->check(at_least(0));
  add_group_options(c, &a->world, &a->world_given, &a->gpus);
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
  c->callback([a, c, &g] {
    for (const char* flag : {"--max-cost", "--max-time", "--max-tokens", "--reasoning-effort"})
      if (c->count(flag)) a->given.insert(flag);
    g.exit_code = run_generate(*a, g);
  });
}

}  // namespace mgk::cli
