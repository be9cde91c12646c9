#include "generate/run.h"

#include <iostream>
#include <memory>
#include <numeric>

#include "agent/agent.h"
#include "agent/session_setup.h"
#include "bench_run/dry_run.h"
#include "bench_run/gpu_pool.h"
#include "common/interrupt.h"
#include "common/log.h"
#include "eval/calibration.h"
#include "eval/machine.h"
#include "eval/preflight.h"
#include "generate/output.h"
#include "generate/tune_best.h"
#include "llm/config.h"
#include "problems/catalog.h"

namespace mgk::generate {
namespace {

// A resumed session samples and stops as it began: the stored attempt's limits and sampling
// stand for every flag the command line leaves out.
void keep_stored_session(const nlohmann::json& stored, Request& a) {
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

// The GPU of each rank: --gpus as given (a GPU named twice makes ranks share it), else one
// visible GPU per rank, else the visible ones shared round robin (checked, not timed).
std::vector<int> rank_gpus_for(const std::vector<int>& given, int world, const eval::MachineInfo& machine,
                               bool compile_only) {
  if (!given.empty() || compile_only) return given;
  std::vector<int> visible(machine.gpus.size());
  std::iota(visible.begin(), visible.end(), 0);
  return bench_run::rank_gpus(world, visible);
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

}  // namespace

ExitCode run(Request a, store::Store& store) {
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
  const std::vector<int>& given_gpus = a.gpus;
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
  const std::optional<eval::Peaks> peaks = a.compile_only ? std::nullopt : eval::calibrated_peaks(store, machine);

  eval::EvalOptions eval_options;
  eval_options.plan = eval::plan_evaluation(spec, {}, "", world);
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
  choices.shell_gpus = given_gpus.empty() && !shared ? "" : bench_run::gpu_list(gpus);
  choices.compile_only = a.compile_only;
  choices.gpus = gpus;
  agent::AgentSetup setup = agent::build_session_setup(prompts, spec, choices);

  if (a.dry_run) {
    bench_run::DryRun d;
    d.model = model;
    d.mode = mode;
    d.turns = turns;
    d.max_tokens = choices.sampling.max_tokens;
    d.problems = {{problem, world}};
    d.groups = {bench_run::group_line(world, {gpus}, a.compile_only)};
    d.example = problem;
    d.prompt = setup.prompt;
    d.first_prompts_chars = static_cast<long long>(setup.prompt.system.size() + setup.prompt.user.size());
    d.llm = &llm_config;
    bench_run::print_dry_run(std::cout, d);
    eval::report_preflight_for_dry_run({spec}, machine, a.compile_only);
    return ExitCode::kOk;
  }
  std::unique_ptr<llm::Provider> provider = llm::make_provider(model, llm_config);  // a missing key, at once
  agent::check_cost_limit(*provider, choices.limits);  // an unpriced model with a cost limit, at once
  announce_price(*provider);
  // Everything that would fail every evaluation is found before the first paid call.
  eval::preflight({spec}, machine, {a.compile_only, true});
  if (shared)
    log::info("ranks share a GPU (" + bench_run::gpu_list(gpus) + "): kernels are checked for correctness, not timed");

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

}  // namespace mgk::generate
