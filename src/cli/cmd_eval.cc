// mgk eval PROBLEM KERNEL.cu: the evaluator by hand.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include "cli/commands.h"
#include "cli/options.h"
#include "common/progress_line.h"
#include "common/file.h"
#include "common/hash.h"
#include "common/interrupt.h"
#include "common/log.h"
#include "eval/evaluate.h"
#include "eval/evaluation_text.h"
#include "problems/catalog.h"

namespace mgk::cli {

namespace {

struct EvalArgs {
  std::string problem, kernel, gpus, sizes, dtype, arch, work_dir;
  int world = 2, trials = 3, iterations = 100, back_to_back = 8, timed_checks = 3;
  bool world_given = false;
  double timeout = 20;
  bool reference = false, expert = false, compile_only = false, no_time = false, json = false, no_store = false,
       keep_going = false;
  std::vector<std::string> defines, nvcc_flags;
};

ExitCode exit_code_for(results::Verdict v) {
  switch (v) {
    case results::Verdict::kCorrect:
    case results::Verdict::kCompiled: return ExitCode::kOk;
    case results::Verdict::kTimeout: return ExitCode::kTimeout;
    case results::Verdict::kInfrastructure: return ExitCode::kInfrastructure;
    default: return ExitCode::kIncorrect;
  }
}

void record(store::Store& store, const eval::EvalOptions& o, const std::vector<std::string>& asked_sizes,
            const results::EvalResult& r, const std::string& source) {
  std::string hash = store.put_kernel(source);
  // What the evaluation was, as it could be run again from anywhere: the kernel's absolute
  // path, the sizes and dtype asked for, compile only or not.
  const std::string kernel =
      o.kernel_is_reference ? "(reference)" : std::filesystem::absolute(o.kernel).lexically_normal().string();
  nlohmann::json args = {{"problem", o.plan.spec.name}, {"kernel", kernel}, {"world", o.plan.world_size}};
  if (!asked_sizes.empty()) args["size"] = asked_sizes;
  if (!o.plan.dtype.empty()) args["dtype"] = o.plan.dtype;
  if (o.compile_only) args["compile_only"] = true;
  int64_t run = store.begin_run({"eval", "", args});
  auto rec = store::EvaluationRecord::from_result(r, hash);
  rec.run_id = run;
  store.record_evaluation(rec);
  store.finish_run(run, store::Status::kDone, {{"verdict", results::to_string(r.verdict)}});
}

ExitCode run_eval(const EvalArgs& a, const Globals& g) {
  eval::EvalOptions o;
  const problems::Spec spec = problems::load(a.problem);
  if (a.reference + a.expert + !a.kernel.empty() != 1)
    throw UsageError("give exactly one of: a KERNEL file, --reference, --expert");
  if (a.reference) o.kernel_is_reference = true;
  else if (a.expert) o.kernel = spec.expert_path();
  else o.kernel = a.kernel;
  o.gpus = parse_int_list(a.gpus, "--gpus");
  const std::vector<std::string> sizes = split_list(a.sizes);
  o.plan = eval::plan_evaluation(spec, sizes, a.dtype, world_from(a.world, a.world_given, o.gpus));
  o.arch = a.arch;
  o.trials = a.trials;
  o.back_to_back = a.back_to_back;
  o.timed_checks = a.timed_checks;
  o.timing_iterations = a.iterations;
  o.time = !a.no_time;
  o.compile_only = a.compile_only;
  o.keep_going = a.keep_going;
  o.timeout_seconds = a.timeout;
  o.defines = a.defines;
  o.nvcc_flags = a.nvcc_flags;
  o.work_dir = a.work_dir;
  install_interrupt_handler();  // from here on Ctrl-C is exit 130 with nothing left running, the probe too
  eval::MachineInfo machine;
  if (!a.compile_only) {
    machine = eval::probe_machine();
    o.peaks = stored_peaks(g, machine);
    if (!o.peaks && !machine.gpus.empty() && o.time && !eval::ranks_share_gpu(o.gpus))
      log::info("no calibration for this machine yet: run 'mgk calibrate' to get roofline fractions");
  }
  // The store is opened (and checked) before the evaluation: a bad --db or MGK_DB is said
  // now, not after minutes of work whose result could then not be kept.
  std::optional<store::Store> store;
  if (!a.no_store) store = open_store(g);
  results::EvalResult r;
  {
    ProgressLine progress;  // compiling, starting ranks, trial k/n, timing: on a terminal only
    if (!a.json) o.progress = progress.callback();
    r = eval::evaluate(o);
  }
  // The bytes the evaluator compiled, not the file as it is now (it may have been edited).
  const std::string& source = r.source;
  if (a.json) std::cout << r.to_json().dump(2) << "\n";
  else std::cout << eval::format_report(r, machine.gpu_model());
  if (!r.compile_log.empty() && !a.json && (r.verdict == results::Verdict::kCompileError || g.verbose))
    std::cout << "--- nvcc output ---\n" << r.compile_log << "\n";
  if (store) record(*store, o, sizes, r, source);
  return exit_code_for(r.verdict);
}

}  // namespace

void add_eval_command(CLI::App& root, Globals& g) {
  auto a = std::make_shared<EvalArgs>();
  CLI::App* c = root.add_subcommand("eval", "Compile a kernel, run it with the reference on every GPU of a group, check and time it");
  c->add_option("problem", a->problem, "Problem name, e.g. collectives/all_reduce (see 'mgk problems')")->required();
  c->add_option("kernel", a->kernel, "The candidate kernel file (.cu) implementing the solution ABI");
  c->add_flag("--reference", a->reference, "Evaluate the problem's reference against itself");
  c->add_flag("--expert", a->expert, "Evaluate the problem's expert solution (expert.cu)");
  add_group_options(c, &a->world, &a->world_given, &a->gpus);
  c->add_option("--size", a->sizes, "Size presets, comma-separated (default: the problem's defaults)");
  c->add_option("--dtype", a->dtype, "Element type for problems that take several (e.g. bf16, f32)");
  c->add_option("--arch", a->arch, "nvcc target, e.g. sm_90a (default: from the GPU)");
  c->add_option("--trials", a->trials, "Correctness trials per size, each with fresh inputs")
      ->capture_default_str()
      ->check(at_least(1));
  c->add_option("--iterations", a->iterations, "Timed iterations per solution per size")
      ->capture_default_str()
      ->check(at_least(1));
  c->add_option("--back-to-back", a->back_to_back,
                "Calls in a row with no barrier between them, each checked (0: skip)")
      ->capture_default_str()
      ->check(at_least(0));
  c->add_option("--timed-checks", a->timed_checks,
                "Timed calls per timing block whose outputs are judged, drawn afresh per block and never told "
                "to the kernel")
      ->capture_default_str()
      ->check(at_least(0));
  c->add_option("--timeout", a->timeout, "Seconds a phase may take before it counts as a hang")
      ->capture_default_str()
      ->check(above(0));
  c->add_flag("--compile-only", a->compile_only, "Only compile (works without a GPU)");
  c->add_flag("--no-time", a->no_time, "Check correctness only");
  c->add_flag("--keep-going", a->keep_going, "After a size fails, check (not time) the sizes after it too (default: stop at the first)");
  c->add_option("-D,--define", a->defines, "Extra define for the kernel, NAME=VALUE (repeatable)");
  c->add_option("--nvcc-flag", a->nvcc_flags, "Extra nvcc flag (repeatable)");
  c->add_option("--work-dir", a->work_dir,
                "Keep the ranks' logs here (rankR.log: the harness; rankR.candidate.log: what the candidate printed)");
  c->add_flag("--json", a->json, "Print the whole result as JSON");
  c->add_flag("--no-store", a->no_store, "Do not record the evaluation in the store");
  c->callback([a, &g] { g.exit_code = run_eval(*a, g); });
}

}  // namespace mgk::cli
