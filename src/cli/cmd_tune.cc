// mgk tune PROBLEM KERNEL.cu: search the kernel's `// mgk:tune` parameters with the
// evaluator as the objective (no model involved), resuming from the trials in the store,
// and write the fastest correct configuration as a ready-to-evaluate kernel file.
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/options.h"
#include "problems/catalog.h"
#include "common/interrupt.h"
#include "common/log.h"
#include "tune/eval_objective.h"
#include "tune/tuning_text.h"
#include "tune/store_trial_cache.h"
#include "tune/strategy.h"
#include "tune/tune_kernel.h"

namespace mgk::cli {
namespace {

struct TuneArgs {
  std::string problem, kernel, strategy = "auto", size, gpus, out, arch;
  int world = 2;
  bool world_given = false;
  std::size_t max_evals = 100;
  double max_time = 0, timeout = 20;
  std::uint64_t seed = 0;
  bool show = false, json = false;
  std::vector<std::string> nvcc_flags;
};

constexpr std::size_t kTableRows = 15;

ExitCode show_cached(const TuneArgs& a, const Globals& g) {
  tune::KernelIdentity kernel = tune::identify_kernel(a.kernel);
  store::Store store = open_store_to_read(g);
  tune::StoreTrialCache cache(store);
  std::vector<tune::Trial> trials = cache.trials_for(kernel.kernel_hash, a.problem);
  tune::sort_best_first(trials);
  if (a.json) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& t : trials) j.push_back(t.to_json());
    std::cout << j.dump(2) << "\n";
  } else if (trials.empty()) {
    std::cout << "no tuning results for " << a.kernel << " (sha256 "
              << kernel.kernel_hash.substr(0, 12) << ") on " << a.problem << "; run 'mgk tune "
              << a.problem << " " << a.kernel << "' first\n";
  } else {
    std::cout << tune::format_trials_table(trials, 0, /*show_context=*/true);
  }
  return ExitCode::kOk;
}

tune::KernelTuneRequest request_from(const TuneArgs& a) {
  tune::KernelTuneRequest r;
  r.eval.kernel = a.kernel;
  r.eval.gpus = parse_int_list(a.gpus, "--gpus");
  require_own_gpus(r.eval.gpus, "tune");
  // The tuner resolves it again at the presets it times (tune::EvalObjective).
  r.eval.plan = eval::plan_evaluation(problems::load(a.problem), {}, "", world_from(a.world, a.world_given, r.eval.gpus));
  r.eval.arch = a.arch;
  r.eval.timeout_seconds = a.timeout;
  r.eval.nvcc_flags = a.nvcc_flags;
  r.size = a.size;
  r.strategy = a.strategy;
  r.max_evals = a.max_evals;
  r.max_seconds = a.max_time;
  r.seed = a.seed;
  if (!a.out.empty()) r.out = a.out;
  return r;
}

void print_summary(const tune::KernelTuneResult& result, const TuneArgs& a) {
  const tune::TuneReport& r = result.report;
  std::vector<tune::Trial> trials;
  for (const auto& t : r.trials) trials.push_back(t.trial);
  if (!trials.empty()) std::cout << tune::format_trials_table(trials, kTableRows) << "\n";
  std::printf("%s search: %zu trials (%zu measured, %zu from the store, %zu failed) in %.0f s\n",
              r.strategy.c_str(), r.trials.size(), r.measured, r.from_cache, r.failed, r.seconds);
  std::cout << "stopped: " << r.message << "\n";
  if (!r.best) {
    std::cout << "no configuration was correct at size " << result.context.size << "\n";
    return;
  }
  const bool several = tune::tuning_sizes(result.context.size).size() > 1;
  std::printf("best: %s: %.2f us %s %s, world size %d\n",
              result.space.describe(r.best->config).c_str(), r.best->trial.time_us,
              several ? "(geometric mean) over sizes" : "at size", result.context.size.c_str(),
              result.context.world_size);
  std::cout << "wrote " << result.best_kernel->string() << "; check it with: mgk eval "
            << a.problem << " " << result.best_kernel->string() << "\n";
}

ExitCode run_tune(const TuneArgs& a, const Globals& g) {
  if (a.show) return show_cached(a, g);
  tune::KernelTuneRequest request = request_from(a);
  // Usage errors before a run is recorded: unreadable kernel, bad or no markers, no problem.
  if (tune::identify_kernel(a.kernel).space.empty())
    throw UsageError(a.kernel + " declares no tunable parameters; add markers such as "
                     "'// mgk:tune BLOCKS 8 16 32' (see src/tune/README.md)");
  tune::check_strategy_name(a.strategy);
  if (request.size.empty()) request.size = tune::default_tuning_size(request.eval.plan.spec);
  install_interrupt_handler();
  store::Store store = open_store(g);
  tune::StoreTrialCache cache(store);
  std::size_t index = 0;
  // The run begins with the first trial: a tuning refused before it (no GPU, a bad size)
  // leaves no failed run behind.
  int64_t run_id = 0;
  auto begin = [&] {
    if (run_id == 0)
      run_id = store.begin_run(
          {"tune", "", {{"problem", a.problem}, {"kernel", std::filesystem::absolute(a.kernel).lexically_normal().string()},
                        {"strategy", a.strategy}, {"max_evals", a.max_evals}, {"max_time", a.max_time}, {"seed", a.seed},
                        {"size", a.size}, {"world", request.eval.plan.world_size}}});
  };
  request.on_trial = [&](const tune::Trial& t, const tune::Config&) {
    begin();
    if (!a.json) log::info(tune::progress_line(t, ++index, request.max_evals));  // with --json, in the document
  };
  tune::KernelTuneResult result;
  try {
    result = tune::tune_kernel(request, cache);
  } catch (const Interrupted& e) {
    if (run_id) store.finish_run(run_id, store::Status::kInterrupted, {{"error", e.what()}});
    throw;
  } catch (const Error& e) {
    if (run_id) store.finish_run(run_id, store::Status::kFailed, {{"error", e.what()}});
    throw;
  }
  begin();  // no trial ran (every one cached, or none to run): the run still says what was asked
  const tune::TuneReport& r = result.report;
  nlohmann::json summary = r.to_json();
  summary.erase("trials");  // every trial is in tuning_trials already
  summary["kernel_hash"] = result.context.kernel_hash;
  summary["best_kernel"] = result.best_kernel ? result.best_kernel->string() : "";
  store.finish_run(run_id,
                   r.stop == tune::StopReason::kInterrupted      ? store::Status::kInterrupted
                   : r.stop == tune::StopReason::kInfrastructure ? store::Status::kFailed
                                                                 : store::Status::kDone,
                   summary);

  if (a.json) {
    nlohmann::json j = r.to_json();
    j["context"] = {{"kernel_hash", result.context.kernel_hash},
                    {"problem", result.context.problem},
                    {"size", result.context.size},
                    {"world_size", result.context.world_size},
                    {"gpu_model", result.context.gpu_model},
                    {"driver", result.context.driver}};
    j["best_kernel"] = result.best_kernel ? nlohmann::json(result.best_kernel->string())
                                          : nlohmann::json(nullptr);
    std::cout << j.dump(2) << "\n";
  } else {
    print_summary(result, a);
  }
  if (r.stop == tune::StopReason::kInfrastructure) {
    log::error(r.message);
    return ExitCode::kInfrastructure;
  }
  if (r.stop == tune::StopReason::kInterrupted) return ExitCode::kInterrupted;
  return r.best ? ExitCode::kOk : ExitCode::kIncorrect;
}

std::string strategy_help() {
  std::string text = "Search strategy:";
  for (const auto& s : tune::strategies()) text += std::string("\n  ") + s.name + ": " + s.summary;
  return text;
}

}  // namespace

void add_tune_command(CLI::App& root, Globals& g) {
  auto a = std::make_shared<TuneArgs>();
  CLI::App* c = root.add_subcommand(
      "tune", "Search a kernel's '// mgk:tune' parameters with the evaluator and write the "
              "fastest correct configuration");
  c->add_option("problem", a->problem, "Problem name, e.g. collectives/all_reduce")->required();
  c->add_option("kernel", a->kernel, "The kernel file (.cu) with '// mgk:tune' markers")
      ->required();
  c->add_option("--strategy", a->strategy, strategy_help())->capture_default_str();
  c->add_option("--max-evals", a->max_evals,
                "Trials in all, those found in the store included")
      ->capture_default_str()
      ->check(at_least(1));
  c->add_option("--max-time", a->max_time,
                "Seconds after which no new evaluation starts (0: no limit)")
      ->capture_default_str()
      ->check(at_least(0));
  c->add_option("--size", a->size,
                "Size preset whose time is minimised (default: medium, else the problem's "
                "last default preset), or several, comma-separated: their geometric mean, "
                "which ranks configurations as the geometric mean of their speedups does");
  add_group_options(c, &a->world, &a->world_given, &a->gpus);
  c->add_option("--seed", a->seed, "Seed of the search; the same seed replays the same search")
      ->capture_default_str();
  c->add_option("--out", a->out, "Where to write the best kernel (default: KERNEL.tuned.cu)");
  c->add_option("--arch", a->arch, "nvcc target, e.g. sm_90a (default: from the GPU)");
  c->add_option("--timeout", a->timeout, "Seconds a phase may take before it counts as a hang")
      ->capture_default_str()
      ->check(above(0));
  c->add_option("--nvcc-flag", a->nvcc_flags, "Extra nvcc flag (repeatable)");
  c->add_flag("--show", a->show,
              "List the stored results for this kernel and problem, best first; run nothing");
  c->add_flag("--json", a->json, "Print the results as JSON");
  c->callback([a, &g] { g.exit_code = run_tune(*a, g); });
}

}  // namespace mgk::cli
