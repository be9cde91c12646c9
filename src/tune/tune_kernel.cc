#include "tune/tune_kernel.h"

#include <fstream>
#include <sstream>

#include "common/error.h"
#include "common/file.h"
#include "common/format.h"
#include "common/hash.h"
#include "common/log.h"
#include "problems/catalog.h"
#include "tune/best_kernel.h"
#include "tune/eval_objective.h"
#include "tune/markers.h"
#include "tune/strategy.h"

namespace mgk::tune {

GpuIdentity gpu_identity(const eval::MachineInfo& machine, int gpu) {
  if (machine.gpus.empty())
    throw Error("no GPU to tune on (the tuning cache is keyed by GPU model and driver): " +
                (machine.error.empty() ? std::string("the probe found none") : machine.error));
  for (const auto& g : machine.gpus)
    if (g.index == gpu) return GpuIdentity{g.name, std::to_string(machine.driver_version)};
  throw UsageError("GPU " + std::to_string(gpu) + " is not visible; this machine has " +
                   std::to_string(machine.gpus.size()) + " (see 'mgk doctor')");
}

KernelIdentity identify_kernel(const std::filesystem::path& kernel) {
  KernelIdentity id;
  id.source = read_file(kernel, "kernel file", ExitCode::kUsage);
  id.kernel_hash = sha256_hex(id.source);
  id.space = parse_markers(id.source, kernel.string());
  return id;
}

std::string default_tuning_size(const problems::Spec& spec) {
  if (spec.sizes.count("medium")) return "medium";
  if (!spec.default_sizes.empty()) return spec.default_sizes.back();
  if (!spec.size_names.empty()) return spec.size_names.back();
  throw UsageError("problem " + spec.name + " defines no size presets");
}

std::filesystem::path default_best_path(const std::filesystem::path& kernel) {
  std::filesystem::path out = kernel;
  out.replace_filename(kernel.stem().string() + ".tuned" + kernel.extension().string());
  return out;
}

namespace {

std::vector<std::string> best_kernel_notes(const KernelTuneRequest& request,
                                           const KernelTuneResult& result) {
  const TrialContext& c = result.context;
  const TunedConfig& best = *result.report.best;
  return {
      "Tuned by mgk for " + c.problem + ", size " + c.size + ", world size " +
          std::to_string(c.world_size) + ", " + c.gpu_model + " (driver " + c.driver + ").",
      "Fastest correct configuration: " + result.space.describe(best.config) + ": " + fixed(best.trial.time_us, 2) +
          " us (" + result.report.strategy + " search, " +
          std::to_string(result.report.trials.size()) + " trials, seed " +
          std::to_string(request.seed) + ").",
      "Tuned from " + request.eval.kernel.filename().string() + " (sha256 " +
          c.kernel_hash.substr(0, 16) + "...). These are defaults: -DNAME=VALUE overrides them.",
  };
}

}  // namespace

KernelTuneResult tune_kernel(const KernelTuneRequest& request, TrialCache& cache) {
  check_strategy_name(request.strategy);  // usage errors before probing the machine
  if (request.max_evals == 0) throw UsageError("the evaluation budget must be at least 1");
  KernelIdentity kernel = identify_kernel(request.eval.kernel);
  if (kernel.space.empty())
    throw UsageError(request.eval.kernel.string() + " declares no tunable parameters; add "
                     "markers such as '// mgk:tune BLOCKS 8 16 32' (see src/tune/README.md)");
  eval::CompileRequest build;  // where its `#include "..."` are found, as the evaluator builds it
  build.source = request.eval.kernel;
  build.problem_dir = request.eval.plan.spec.dir;
  const std::string with_headers = with_included_files(kernel.source, request.eval.kernel, eval::include_dirs(build));
  for (const auto& name : parameters_without_default(with_headers, kernel.space))
    log::warning(request.eval.kernel.string() + " gives " + name + " no default (#ifndef " +
                 name + " / #define " + name + " ... / #endif, in it or in a header it "
                 "includes): it builds only with the tuner's defines");

  KernelTuneResult result;
  result.context.kernel_hash = kernel.kernel_hash;
  result.context.problem = request.eval.plan.spec.name;
  result.context.size = request.size.empty() ? default_tuning_size(request.eval.plan.spec)
                                             : request.size;
  result.context.world_size = request.eval.plan.world_size;
  EvalObjective objective(kernel.space, request.eval, result.context.size);  // checks the size
  if (request.gpu_model.empty() || request.driver.empty()) {
    GpuIdentity gpu = gpu_identity(eval::probe_machine(),
                                   request.eval.gpus.empty() ? 0 : request.eval.gpus.front());
    result.context.gpu_model = gpu.model;
    result.context.driver = gpu.driver;
  } else {
    result.context.gpu_model = request.gpu_model;
    result.context.driver = request.driver;
  }

  TuneOptions options;
  options.space = kernel.space;
  options.context = result.context;
  options.strategy = request.strategy;
  options.max_evals = request.max_evals;
  options.max_seconds = request.max_seconds;
  options.seed = request.seed;
  options.on_trial = request.on_trial;
  result.report = run(options, cache, objective);
  result.space = std::move(kernel.space);

  if (result.report.best) {
    const std::filesystem::path out =
        request.out ? *request.out : default_best_path(request.eval.kernel);
    write_file_atomically(out, bake_configuration(kernel.source, result.space,
                                                  result.report.best->config,
                                                  best_kernel_notes(request, result)));
    result.best_kernel = out;
  }
  return result;
}

}  // namespace mgk::tune
