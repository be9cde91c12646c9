// mgk bench: a benchmark run over many problems, several samples each, with one model; ends
// with the report. This file is its flags; bench/run.h is what it does with them (choosing,
// resuming, running here or on Slurm, rejudging, ending).
#include <unistd.h>

#include <memory>

#include "bench_run/request.h"
#include "bench_run/run.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/session_flags.h"

namespace mgk::cli {
namespace {

// --gpus as typed: bench_run::Request holds the parsed list.
struct BenchFlags {
  bench_run::Request request;
  std::string gpus;
};

}  // namespace

void add_bench_command(CLI::App& root, Globals& g) {
  auto flags = std::make_shared<BenchFlags>();
  bench_run::Request* a = &flags->request;
  CLI::App* c = root.add_subcommand("bench", "Run a model over many problems, several samples each; ends with the report");
  c->add_option("--model", a->model, "provider:model, e.g. anthropic:claude-sonnet-4-5, openai:gpt-4o, vllm:qwen");
  c->add_option("--problems", a->problems,
                "Problems: names and globs, comma-separated, repeatable: 'collectives/*,tp/gemm_a*' (default: all; "
                "see 'mgk problems')");
  c->add_option("--problems-file", a->problems_file, "More problems, one name or glob per line ('#' comments)");
  c->add_option("--samples", a->samples, "Attempts per problem (the n of pass@k)")->capture_default_str();
  c->add_option("--mode", a->mode, "refine (whole file per reply) or shell (one command per reply)")
      ->check(CLI::IsMember({"refine", "shell"}))
      ->capture_default_str();
  c->add_option("--turns", a->turns, "Model calls per attempt (default: " + std::to_string(agent::kRefineTurns) +
                                         " in refine mode, " + std::to_string(agent::kShellSteps) +
                                         " steps in shell mode)");
  c->add_option("--world", a->world, "Ranks per problem, moved into each problem's allowed range")
      ->capture_default_str();
  c->add_option("--jobs", a->jobs, "Attempts in flight at once (model calls run concurrently)")->capture_default_str();
  c->add_option("--gpus", flags->gpus,
                "GPUs evaluations may use, e.g. 0,1,2,3 (default: every visible one); with fewer GPUs than ranks "
                "the ranks share them: checked, not timed");
  add_cost_option(c, "--max-cost", &a->max_cost,
                  "Stop new work once the whole run cost this many USD, resumed sessions included (0: no limit)");
  add_cost_option(c, "--attempt-max-cost", &a->attempt_max_cost,
                  "Stop an attempt before a call that could take it past this many USD (0: no limit)");
  add_sampling_options(c, {&a->max_tokens, &a->temperature, &a->temperature_given, &a->reasoning_effort,
                           &a->command_timeout});
  c->add_option("--resume", a->resume, "Continue a stored bench run: skip what finished, continue what was cut off");
  c->add_option("--name", a->name,
                "A name for the run, unique in the store: 'mgk report NAME' finds it, the reports' titles show it "
                "(a resume may rename it)");
  c->add_option("--rejudge", a->rejudge,
                "Judge a stored bench run's kernels again, here, with today's evaluator and no model call, into a "
                "new run ('mgk report RUN NEW' sets them side by side); again: continues that rejudge");
  c->add_flag("--new", a->new_run, "Start a new run even where one with the same arguments exists");
  c->add_flag("--retry-failed", a->retry_failed, "On resume, also continue attempts that failed with an error");
  c->add_flag("--compile-only", a->compile_only, "The judge only compiles kernels (no GPU needed; nothing is checked)");
  c->add_flag("--dry-run", a->dry_run,
              "Print the attempts, GPU groups, one attempt's first prompt and a token estimate; call no model");
  c->add_flag("--json", a->json, "Progress and the final summary as JSON lines");
  c->add_option("--p", a->ps, "Extra speedup thresholds p for fast_p (0, 1, 1.5 and 2 are always shown)");
  c->add_option("--executor", a->executor, "Where the attempts run: local (this machine) or slurm (a job array)")
      ->check(CLI::IsMember({"local", "slurm"}))
      ->capture_default_str();
  c->add_option("--array-tasks", a->slurm.tasks,
                "Slurm: array tasks, each running its shard of the attempts (default: one per attempt)")
      ->check(CLI::NonNegativeNumber);
  c->add_option("--partition", a->slurm.partition, "Slurm: the partition (default: the cluster's)");
  c->add_option("--gpus-per-task", a->slurm.gpus_per_task, "Slurm: the GPUs of each array task")
      ->check(CLI::NonNegativeNumber);
  c->add_option("--time", a->slurm.time, "Slurm: each task's time limit, as sbatch takes it (e.g. 2:00:00)");
  c->add_option("--array-parallelism", a->slurm.array_parallelism, "Slurm: array tasks running at once (default: no cap)")
      ->check(CLI::NonNegativeNumber);
  c->add_option("--sbatch-arg", a->slurm.sbatch_args,
                "Slurm: one more sbatch option for the script, written --sbatch-arg=--account=lab (repeatable)")
      ->allow_extra_args(false);
  c->add_option("--status", a->status, "A Slurm run's progress: each task done, running, pending or failed (its log)");
  c->add_option("--merge", a->merge,
                "Gather a Slurm run's shards into the store (again: only what is new); once every attempt is in, "
                "the run is done and its report printed");
  c->add_option("--shard", a->shard)->group("");  // what a Slurm run's script runs: its task K of N
  c->add_option("--run-file", a->run_file)->group("");
  c->callback([flags, c, &g] {
    bench_run::Request& r = flags->request;
    r.gpus = parse_int_list(flags->gpus, "--gpus");
    for (const CLI::Option* o : c->get_options())
      if (o->count() && !o->get_name().empty()) r.typed.insert(o->get_name());
    r.may_ask = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO) && !r.json && !r.dry_run;
    g.exit_code = bench_run::run(r, {[&g] { return open_store(g); }, [&g] { return open_store_to_read(g); }});
  });
}

}  // namespace mgk::cli
