// mgk bench: a benchmark run over many problems, several samples each, with one model.
// Attempts run concurrently (--jobs), evaluations on disjoint GPU groups; every turn is
// stored as it completes, so a run killed at any moment continues with --resume (or by
// running the same command again) and loses nothing finished. Ends with the report.
// --executor slurm hands the attempts to a Slurm job array instead (cli/bench_slurm.h);
// each of its tasks runs `--shard K/N` here, on its node, with the same local executor.
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <numeric>
#include <set>

#include "agent/session_setup.h"
#include "bench/attempt_runner.h"
#include "bench/bench_spec.h"
#include "bench/gpu_pool.h"
#include "bench/local_executor.h"
#include "bench/pooled_judge.h"
#include "bench/progress.h"
#include "bench/rejudge.h"
#include "bench/work_list.h"
#include "cli/bench_slurm.h"
#include "cli/commands.h"
#include "cli/dry_run.h"
#include "cli/options.h"
#include "cli/preflight.h"
#include "cli/session_flags.h"
#include "common/file.h"
#include "common/interrupt.h"
#include "common/log.h"
#include "common/name_patterns.h"
#include "llm/config.h"
#include "problems/catalog.h"
#include "report/bench_report.h"
#include "report/render_data.h"
#include "report/render_text.h"
#include "store/history_table.h"
#include "store/rows.h"

namespace mgk::cli {
namespace {

// Defaults of what each attempt may do are the agent's (agent/config.h); turns 0: the
// mode's default.
struct BenchArgs {
  std::vector<std::string> problems;  // names and globs, each value a comma list (common/name_patterns.h)
  std::string problems_file;
  std::string model, mode = "refine", gpus, reasoning_effort, executor = "local", name;
  int samples = 1, turns = 0, world = 2, jobs = 4, max_tokens = agent::Sampling{}.max_tokens;
  double max_cost = 0, attempt_max_cost = agent::Limits{}.max_cost_usd, temperature = 0,
         command_timeout = agent::kCommandTimeoutS;
  bool temperature_given = false, compile_only = false, dry_run = false, json = false, new_run = false,
       retry_failed = false;
  int64_t resume = 0, status = 0, merge = 0, rejudge = 0;
  std::vector<double> ps;
  bench::SlurmOptions slurm;          // --executor slurm
  std::string shard, run_file;        // an array task: --shard K/N --run-file DIR/run.json
};

// The options only --executor slurm takes.
const std::vector<std::string> kSlurmFlags = {"--array-tasks", "--partition", "--gpus-per-task",
                                              "--time",        "--array-parallelism", "--sbatch-arg"};

// The flags that define the attempts, by their key in BenchSpec::identity().
const std::map<std::string, std::string> kIdentityFlags = {
    {"--model", "model"},       {"--problems", "problems"},         {"--problems-file", "problems"},
    {"--samples", "samples"},
    {"--mode", "mode"},         {"--turns", "turns"},               {"--world", "world"},
    {"--compile-only", "compile_only"}, {"--temperature", "temperature"},
    {"--reasoning-effort", "reasoning_effort"}, {"--executor", "executor"}};

std::string number(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", v);
  return b;
}

// The flags a resume may change (BenchSpec's limits and execution): each typed one that
// differs from the run's is taken; returns the line that says which, for once the resume
// passed its checks ("run 3 continues with --max-tokens 16384 -> 4096 ...").
std::string take_changed_limits(const CLI::App& c, int64_t run_id, const bench::BenchSpec& fresh,
                                bench::BenchSpec& s) {
  std::string changed;
  auto take = [&](const char* flag, auto& field, const auto& value, const std::string& was, const std::string& now) {
    if (!c.count(flag) || field == value) return;
    changed += (changed.empty() ? "" : ", ") + std::string(flag) + " " + was + " -> " + now;
    field = value;
  };
  take("--attempt-max-cost", s.attempt_max_cost_usd, fresh.attempt_max_cost_usd, number(s.attempt_max_cost_usd),
       number(fresh.attempt_max_cost_usd));
  take("--max-cost", s.max_cost_usd, fresh.max_cost_usd, number(s.max_cost_usd), number(fresh.max_cost_usd));
  take("--max-tokens", s.max_tokens, fresh.max_tokens, std::to_string(s.max_tokens), std::to_string(fresh.max_tokens));
  take("--command-timeout", s.command_timeout_s, fresh.command_timeout_s, number(s.command_timeout_s),
       number(fresh.command_timeout_s));
  take("--jobs", s.jobs, fresh.jobs, std::to_string(s.jobs), std::to_string(fresh.jobs));
  take("--gpus", s.gpus, fresh.gpus, bench::gpu_list(s.gpus), bench::gpu_list(fresh.gpus));
  take("--name", s.name, fresh.name, "'" + s.name + "'", "'" + fresh.name + "'");
  if (changed.empty()) return "";
  return "run " + std::to_string(run_id) + " continues with " + changed +
         " (for the calls still to come; what finished keeps what it ran under)";
}

bench::BenchSpec spec_from_flags(const BenchArgs& a, const std::string& prompt_version) {
  bench::BenchSpec s;
  s.model = a.model;
  s.problems = NamePatterns::parse(a.problems, a.problems_file).text();
  s.samples = a.samples;
  s.mode = a.mode;
  s.turns = a.turns > 0 ? a.turns : agent::default_turns(agent::mode_from_string(a.mode));
  s.world = a.world;
  s.compile_only = a.compile_only;
  s.attempt_max_cost_usd = a.attempt_max_cost;
  s.max_tokens = a.max_tokens;
  if (a.temperature_given) s.temperature = a.temperature;
  if (!a.reasoning_effort.empty()) s.reasoning_effort = a.reasoning_effort;
  s.command_timeout_s = a.command_timeout;
  s.prompt_version = prompt_version;
  s.executor = a.executor;
  s.jobs = a.jobs;
  s.gpus = parse_int_list(a.gpus, "--gpus");
  s.max_cost_usd = a.max_cost;
  s.name = a.name;
  return s;
}

// A run's name is how `mgk report NAME` finds it: one bench run per name (`run`: the run that
// takes it, 0 for a new one).
void check_name_is_free(store::Store& store, const std::string& name, int64_t run) {
  if (name.empty()) return;
  if (name.find_first_not_of("0123456789") == std::string::npos)
    throw UsageError("--name '" + name + "' is a number, which 'mgk report' would read as a run id; add a letter");
  if (auto owner = store.run_named("bench", name); owner && owner->id != run)
    throw UsageError("run " + std::to_string(owner->id) + " is already named '" + name +
                     "': choose another name, or continue that run with --resume " + std::to_string(owner->id));
}

// The run is marked running by another process of this machine that still lives.
bool alive_here(const store::RunRecord& r) {
  if (r.status != store::Status::kRunning || !r.pid || r.host != store::rows::host_name()) return false;
  return *r.pid != getpid() && (kill(pid_t(*r.pid), 0) == 0 || errno == EPERM);
}

// The run is marked running on another machine: whether that process lives is unknowable.
bool running_elsewhere(const store::RunRecord& r) {
  return r.status == store::Status::kRunning && r.host != store::rows::host_name();
}

struct Choice {
  bench::BenchSpec spec;
  int64_t run_id = 0;         // 0: a new run
  int64_t complete_run = 0;   // a finished run with the same arguments: nothing to do
  std::string changed;        // the limits a resume changed, said once its checks pass
};

// --resume RUN, else the unfinished run with the same arguments (offered on a terminal,
// taken otherwise), else a new run.
Choice choose_run(const BenchArgs& a, const CLI::App& c, store::Store& store, const std::string& prompt_version) {
  bench::BenchSpec fresh = spec_from_flags(a, prompt_version);
  if (a.resume > 0) {
    auto run = store.run(a.resume);
    if (!run) throw NotFoundError("no bench run " + std::to_string(a.resume) + " in " + store.path().string());
    if (run->kind != "bench")
      throw UsageError("run " + std::to_string(a.resume) + " is " + (run->kind == "eval" ? "an " : "a ") + run->kind +
                       " run, not a bench run ('mgk history --runs' lists the runs)");
    const bool on_slurm = SlurmRun::is_slurm(*run);  // its tasks are Slurm's: no process here to ask
    if (!on_slurm && alive_here(*run))
      throw UsageError("run " + std::to_string(a.resume) + " is being run by process " + std::to_string(*run->pid) +
                       "; let it finish or stop it first");
    if (!on_slurm && running_elsewhere(*run))
      log::warning("run " + std::to_string(a.resume) + " is marked running on " + run->host +
                   "; if a process there still works on it, both will work on the same attempts");
    bench::BenchSpec s = bench::BenchSpec::from_json(run->args, run->id);
    // More samples grow the run: the attempts done are kept, the new samples are added (the
    // n of pass@k grows, nothing else about the benchmark changes). Fewer would drop work.
    std::string grown;
    if (c.count("--samples") && a.samples != s.samples) {
      if (a.samples < s.samples)
        throw UsageError("run " + std::to_string(a.resume) + " has " + std::to_string(s.samples) +
                         " samples a problem; a resume may add samples (--samples " + std::to_string(s.samples + 1) +
                         " or more), not drop them ('mgk report --problems' reports a subset)");
      grown = "run " + std::to_string(a.resume) + " grows from " + std::to_string(s.samples) + " to " +
              std::to_string(a.samples) + " samples a problem (the attempts done are kept)";
      s.samples = a.samples;
    }
    const nlohmann::json stored = s.identity(), given = fresh.identity();
    for (const auto& [flag, key] : kIdentityFlags)
      if (c.count(flag) && stored[key] != given[key])
        throw UsageError("run " + std::to_string(a.resume) + " has " + flag + " " + stored[key].dump() +
                         "; leave " + flag + " out to resume it (or start a new run)");
    if (!grown.empty()) log::info(grown);
    if (s.prompt_version != prompt_version)
      log::warning("run " + std::to_string(run->id) + " began with prompts " + s.prompt_version +
                   "; its remaining attempts use " + prompt_version);
    if (run->status == store::Status::kDone &&
        bench::remaining_work(bench::planned_attempts(s.problem_list, s.samples), store.attempts_of_run(run->id),
                              a.retry_failed)
            .to_run.empty()) {
      if (c.count("--name")) s.name = fresh.name;  // a label: a complete run may be renamed
      return {s, 0, run->id};  // complete: left as it is (its end time too)
    }
    const std::string changed = take_changed_limits(c, run->id, fresh, s);
    return {s, run->id, 0, changed};
  }
  if (a.model.empty()) throw UsageError("give --model (and --problems, --samples), or --resume RUN");
  if (a.samples < 1) throw UsageError("--samples must be at least 1");
  if (a.turns < 0 || (c.count("--turns") && a.turns < 1)) throw UsageError("--turns must be at least 1");
  if (a.jobs < 1) throw UsageError("--jobs must be at least 1");
  fresh.problem_list = bench::expand_problems(fresh.problems);
  if (a.new_run) return {fresh, 0, 0};
  for (const store::RunRecord& r : store.runs_of_kind("bench")) {
    const bool on_slurm = SlurmRun::is_slurm(r);
    if (!on_slurm && (alive_here(r) || running_elsewhere(r))) continue;  // someone may be at work on it
    bench::BenchSpec s;
    try {
      s = bench::BenchSpec::from_json(r.args, r.id);
    } catch (const UsageError&) {
      continue;  // written by another version
    }
    if (s.identity() != fresh.identity()) continue;
    const bench::WorkList work =
        bench::remaining_work(bench::planned_attempts(s.problem_list, s.samples), store.attempts_of_run(r.id), a.retry_failed);
    // A done run's failed attempts are finished, unless --retry-failed asks for them again.
    if (r.status == store::Status::kDone && work.to_run.empty()) return {s, 0, r.id};
    const int finished = int(work.finished.size());
    const std::string what =
        "run " + std::to_string(r.id) + " (started " + r.created_at + ") has the same arguments" +
        (on_slurm ? " and is on Slurm ('mgk bench --status " + std::to_string(r.id) + "' says how far)"
                  : " and " + std::to_string(finished) + " of " + std::to_string(s.problem_list.size() * size_t(s.samples)) +
                        " attempts finished");
    if (isatty(STDIN_FILENO) && isatty(STDOUT_FILENO) && !a.json && !a.dry_run) {
      std::cout << what << ". Continue it? [Y/n] " << std::flush;
      std::string answer;
      std::getline(std::cin, answer);
      if (!answer.empty() && answer[0] != 'y' && answer[0] != 'Y') return {fresh, 0, 0};
    } else {
      log::info(what + ": continuing it (--new starts another run)");
    }
    const std::string changed = take_changed_limits(c, r.id, fresh, s);
    return {s, r.id, 0, changed};
  }
  return {fresh, 0, 0};
}

struct Prepared {
  std::vector<problems::Spec> specs;
  std::map<std::string, bench::ProblemSession> sessions;
  std::vector<int> gpus;  // what the pool hands out
};

Prepared prepare(const bench::BenchSpec& s, const eval::MachineInfo& machine, const std::optional<eval::Peaks>& peaks,
                 const agent::PromptLibrary& prompts) {
  Prepared p;
  p.gpus = s.gpus;
  if (p.gpus.empty()) {
    p.gpus.resize(machine.gpus.size());
    std::iota(p.gpus.begin(), p.gpus.end(), 0);
  }
  if (!s.compile_only && !machine.gpus.empty())
    for (int g : p.gpus)
      if (g >= int(machine.gpus.size()))
        throw UsageError("--gpus names GPU " + std::to_string(g) + ", but " + std::to_string(machine.gpus.size()) +
                         " are visible (0.." + std::to_string(machine.gpus.size() - 1) +
                         "; check CUDA_VISIBLE_DEVICES)");
  for (const std::string& name : s.problem_list) {
    problems::Spec spec = problems::load(name);
    const int world = bench::world_for(spec, s.world);
    agent::SessionChoices c;
    c.mode = agent::mode_from_string(s.mode);
    c.world_size = world;
    c.limits.turns = s.turns;
    c.limits.max_cost_usd = s.attempt_max_cost_usd;
    c.sampling.max_tokens = s.max_tokens;
    c.sampling.temperature = s.temperature;
    c.sampling.reasoning_effort = s.reasoning_effort;
    c.command_timeout_s = s.command_timeout_s;
    c.topology = agent::topology_of(machine, world, peaks);
    c.compile_only = s.compile_only;
    // Shell mode sees only its group (CUDA_VISIBLE_DEVICES): its ranks share where the
    // group has fewer GPUs than ranks.
    const size_t distinct = std::min(size_t(world), p.gpus.size());
    if (!s.compile_only && distinct < size_t(world)) {
      std::vector<int> relative(distinct);
      std::iota(relative.begin(), relative.end(), 0);
      c.shell_gpus = bench::gpu_list(bench::rank_gpus(world, relative));
    }
    bench::ProblemSession ps;
    ps.setup = agent::build_session_setup(prompts, spec, c);
    ps.eval.problem = name;
    ps.eval.world_size = world;
    ps.eval.peaks = peaks;
    ps.eval.compile_only = s.compile_only;
    p.sessions.emplace(name, std::move(ps));
    p.specs.push_back(std::move(spec));
  }
  return p;
}

void print_dry_run_of(const bench::BenchSpec& s, const Prepared& p, const eval::MachineInfo& machine,
                      const llm::Config& llm_config) {
  DryRun d;
  d.model = s.model;
  d.mode = s.mode;
  d.turns = s.turns;
  d.samples = s.samples;
  d.max_tokens = s.max_tokens;
  std::map<int, bool> worlds;
  for (const auto& [name, ps] : p.sessions) {
    d.problems.emplace_back(name, ps.eval.world_size);
    worlds[ps.eval.world_size] = true;
    d.first_prompts_chars +=
        static_cast<long long>(ps.setup.prompt.system.size() + ps.setup.prompt.user.size()) * s.samples;
  }
  const bool here = s.executor == "local";  // else the GPUs and the checks are the array tasks'
  for (const auto& [world, unused] : worlds) {
    std::vector<std::vector<int>> groups;
    if (!s.compile_only && !p.gpus.empty()) groups = bench::GpuPool(p.gpus).groups(world);
    d.groups.push_back(!here && !s.compile_only ? std::to_string(world) + " ranks: on each array task's GPUs"
                       : s.compile_only || !p.gpus.empty() ? group_line(world, groups, s.compile_only)
                                                           : std::to_string(world) + " ranks: no GPU visible");
  }
  const auto& first = *p.sessions.begin();
  d.example = first.first + " sample 0";
  d.prompt = first.second.setup.prompt;
  d.llm = &llm_config;
  print_dry_run(std::cout, d);
  if (here) report_preflight_for_dry_run(p.specs, machine, s.compile_only);
}

// Finished attempts of the run: what the progress display starts from.
bench::Progress::Counts counts_of(store::Store& store, const std::vector<int64_t>& finished,
                                  const std::optional<double>& spent) {
  bench::Progress::Counts c;
  c.spent_usd = spent;
  for (int64_t id : finished) {
    report::AttemptResult r = report::classify(report::load_attempt(store, id));
    ++c.done;
    c.correct += r.outcome == report::Outcome::kCorrect;
    c.fast += report::faster_than(r, 1);
    c.compiled += r.outcome == report::Outcome::kCompiled;
  }
  return c;
}

std::string outcome_phrase(const report::AttemptResult& r) {
  std::string s = report::describe(r.outcome);
  if (r.speedup) s += " " + store::format_speedup(r.speedup);
  else if (r.outcome == report::Outcome::kCorrect) s += " (" + report::no_speedup_because(r) + ")";
  return s;
}

// This machine ready to run the spec's attempts: the sessions prepared, the model's provider
// (a missing key stops here) and the pre-flight passed (GPUs, nvcc, the references compiling).
struct Here {
  Prepared p;
  std::unique_ptr<llm::Provider> provider;  // null for a rejudge: no model is called
  std::unique_ptr<bench::GpuPool> pool;     // null with --compile-only
};

// An unpriced model with a cost limit: refused before any run exists (a local vLLM or
// Ollama model is exactly this case; --attempt-max-cost 0 runs it).
void check_cost_limits(const llm::Provider& provider, const bench::BenchSpec& spec) {
  agent::check_cost_limits(provider,
                           {{"--attempt-max-cost", spec.attempt_max_cost_usd}, {"--max-cost", spec.max_cost_usd}});
}

Here set_up_here(const bench::BenchSpec& spec, const Globals& g, const agent::PromptLibrary& prompts) {
  Here h;
  if (!spec.rejudge_of) {
    h.provider = llm::make_provider(spec.model, llm::load_config());
    check_cost_limits(*h.provider, spec);
  }
  const eval::MachineInfo machine = eval::probe_machine();
  const std::optional<eval::Peaks> peaks = spec.compile_only ? std::nullopt : stored_peaks(g, machine);
  h.p = prepare(spec, machine, peaks, prompts);
  preflight(h.p.specs, machine, {spec.compile_only, true});
  throw_if_interrupted();  // Ctrl-C while the references compiled: no run is begun
  if (!spec.compile_only) h.pool = std::make_unique<bench::GpuPool>(h.p.gpus);
  return h;
}

void print_dry_run_here(const bench::BenchSpec& spec, const Globals& g, const agent::PromptLibrary& prompts) {
  const eval::MachineInfo machine = eval::probe_machine();
  const std::optional<eval::Peaks> peaks = spec.compile_only ? std::nullopt : stored_peaks(g, machine);
  print_dry_run_of(spec, prepare(spec, machine, peaks, prompts), machine, llm::load_config());
}

// "mgk bench run 3: openai:gpt-4o, refine, 8 problem(s) x 2 sample(s), 4 job(s), GPUs 0,1".
std::string title_of(const std::string& what, const bench::BenchSpec& spec, const Here& here) {
  return what + ": " + spec.model + ", " + spec.mode + ", " + std::to_string(spec.problem_list.size()) +
         " problem(s) x " + std::to_string(spec.samples) + " sample(s), " + std::to_string(spec.jobs) + " job(s)" +
         (spec.compile_only ? ", compile only" : ", GPUs " + bench::gpu_list(here.p.gpus));
}

struct Ran {
  bench::StopReason stop = bench::StopReason::kFinished;
  size_t finished = 0, planned = 0;  // attempts of the plan finished, now
  bool complete() const { return finished == planned; }
};

// Runs one work item to its end; returns its stored attempt.
using RunAttempt = std::function<int64_t(const bench::WorkItem&, const bench::AttemptHooks&)>;
// The run's RunAttempt, made once the executor (its stop flag, its budget) exists.
using MakeRunAttempt = std::function<RunAttempt(bench::LocalExecutor&)>;

// The model's attempts: agent sessions.
MakeRunAttempt model_attempts(store::Store& store, int64_t run_id, Here& here, const agent::PromptLibrary& prompts) {
  return [&store, run_id, &here, &prompts](bench::LocalExecutor& executor) -> RunAttempt {
    auto runner = std::make_shared<bench::AttemptRunner>(
        run_id, std::move(here.p.sessions),
        bench::AttemptDeps{here.provider.get(), &store, &prompts, here.pool.get(), &interrupt_flag(),
                           &executor.stop_flag(), &executor});
    return [runner](const bench::WorkItem& item, const bench::AttemptHooks& hooks) { return runner->run(item, hooks); };
  };
}

// The attempts of `planned` that the store does not hold finished, run on this machine into
// run `run_id` with the progress display: the local executor, for a local run, each Slurm
// array task and a rejudge alike. `max_cost`: the budget of this run (or task), earlier
// sessions included.
Ran run_here(const BenchArgs& a, store::Store& store, int64_t run_id, const bench::BenchSpec& spec,
             const std::vector<bench::AttemptKey>& planned, Here& here, const std::string& title, double max_cost,
             const MakeRunAttempt& make_run_attempt) {
  const bench::WorkList work = bench::remaining_work(planned, store.attempts_of_run(run_id), a.retry_failed);
  // A model with no price has no known spend (and no budget: the pre-flight refuses one). A
  // rejudge calls no model: it spends nothing (its copied turns' cost is the judged run's).
  const bool priced = !here.provider || here.provider->price().has_value();
  const std::optional<double> known_before = here.provider ? store.run(run_id)->cost_usd : 0.0;
  const double spent_before = known_before.value_or(0);
  const bench::Progress::Style style = a.json                     ? bench::Progress::Style::kJson
                                       : isatty(STDOUT_FILENO) ? bench::Progress::Style::kLive
                                                               : bench::Progress::Style::kLines;
  bench::Progress progress(std::cout, style, title, int(planned.size()), std::min(spec.jobs, int(work.to_run.size())),
                           counts_of(store, work.finished, priced ? known_before : std::nullopt));

  bench::LocalExecutor executor({spec.jobs, max_cost, spent_before, 5}, &interrupt_flag());
  const RunAttempt run_attempt = make_run_attempt(executor);
  executor.on_error = [&](const bench::WorkItem& item, const std::string& error) {
    progress.note("error in " + item.key.problem + " sample " + std::to_string(item.key.sample) + ": " + error);
  };
  const bench::StopReason stop = executor.run(work.to_run, [&](const bench::WorkItem& item, int worker) {
    bench::AttemptHooks hooks;
    hooks.status = [&progress, worker](const std::string& s) { progress.worker(worker, s); };
    hooks.on_turn = [&](const agent::TurnReport&) {  // the call settled its cost with the executor
      progress.spent(priced ? std::optional<double>(executor.spent()) : std::nullopt);
    };
    const int64_t id = run_attempt(item, hooks);
    const report::AttemptResult r = report::classify(report::load_attempt(store, id));
    if (r.outcome == report::Outcome::kUnfinished) {
      progress.note(item.key.problem + " sample " + std::to_string(item.key.sample) + " (attempt " +
                    std::to_string(id) + ") stopped before its end: a resume continues it");
      return;
    }
    progress.attempt_done(item.key, id, outcome_phrase(r), r.outcome == report::Outcome::kCorrect,
                          report::faster_than(r, 1), r.outcome == report::Outcome::kCompiled, r.cost_usd);
  });
  progress.close();
  const size_t left = bench::remaining_work(planned, store.attempts_of_run(run_id), false).to_run.size();
  return {stop, planned.size() - left, planned.size()};
}

ExitCode exit_code_of(const Ran& r) {
  if (r.complete()) return ExitCode::kOk;
  switch (r.stop) {
    case bench::StopReason::kBudget: return ExitCode::kLimit;  // the budget stopped new work: resumable
    case bench::StopReason::kErrors: return ExitCode::kInfrastructure;
    default: return ExitCode::kInterrupted;
  }
}

// The run's end: its state (done when complete, else interrupted) and summary stored, and its
// report printed (with --json, one line).
void end_run(const BenchArgs& a, store::Store& store, int64_t run_id, bool complete, bench::StopReason stop) {
  report::RunReport rep = report::build_report(store, run_id, a.ps);
  store.finish_run(run_id, complete ? store::Status::kDone : store::Status::kInterrupted,
                   report::summary_json(rep.metrics));
  rep.data.run = *store.run(run_id);  // its status and end as just stored
  const std::string id = std::to_string(run_id);
  if (a.json) {
    std::cout << nlohmann::json{{"event", "report"}, {"run", run_id}, {"complete", complete},
                                {"stopped", bench::to_string(stop)}, {"summary", report::summary_json(rep.metrics)}}
                     .dump()
              << std::endl;
    return;
  }
  std::cout << "\n" << report::render_text({rep}, false);
  if (!complete)
    std::cout << "\nstopped (" << bench::to_string(stop) << ") before the end: 'mgk bench --resume " << id
              << "' continues" << (stop == bench::StopReason::kBudget ? " (with a larger --max-cost)" : "") << "\n";
  std::cout << "the report as HTML: mgk report " << id << " --format html -o report-" << id << ".html\n";
}

// One array task of a Slurm run, as its script calls it: shard K/N of the run --run-file
// describes, run here into the store --db names (the task's own). The shard's run keeps the
// run's uuid, so that merging folds it into the run; it is left "running" (a shard ends no
// run: the run is done when its merged shards hold every attempt, `mgk bench --merge`).
ExitCode run_array_task(const BenchArgs& a, const Globals& g) {
  int k = -1, n = 0;
  if (std::sscanf(a.shard.c_str(), "%d/%d", &k, &n) != 2 || a.run_file.empty())
    throw UsageError("--shard takes K/N (0 <= K < N), with --run-file: what a Slurm run's script gives");
  const nlohmann::json run = nlohmann::json::parse(read_file(a.run_file, "the run file", ExitCode::kUsage), nullptr, false);
  if (!run.is_object() || !run.contains("args") || !run.contains("uuid"))
    throw UsageError(a.run_file + " is not a run file 'mgk bench --executor slurm' wrote");
  const int64_t run_id = run.value("run", int64_t(0));
  const std::string uuid = run.value("uuid", ""), what = "mgk bench run " + std::to_string(run_id) + ", task " + a.shard;
  bench::BenchSpec spec = bench::BenchSpec::from_json(run["args"], run_id);
  const std::vector<bench::AttemptKey> planned =
      bench::shard_of(bench::planned_attempts(spec.problem_list, spec.samples), k, n);
  std::set<std::string> mine;  // the problems of this shard: the references this task compiles
  for (const auto& key : planned) mine.insert(key.problem);
  spec.problem_list.assign(mine.begin(), mine.end());

  store::Store store = open_store(g);
  const agent::PromptLibrary prompts = agent::PromptLibrary::load_default();
  install_interrupt_handler();  // scancel sends SIGTERM: the attempts in flight stop, resumable
  Here here = set_up_here(spec, g, prompts);
  int64_t shard_run = 0;
  for (const store::RunRecord& r : store.runs_of_kind("bench"))
    if (r.uuid == uuid) shard_run = r.id;
  if (shard_run == 0) shard_run = store.begin_run({"bench", spec.model, run["args"]}, uuid);
  const Ran ran = run_here(a, store, shard_run, spec, planned, here, title_of(what, spec, here),
                           spec.max_cost_usd / n,  // the run's budget, shared evenly
                           model_attempts(store, shard_run, here, prompts));
  std::cout << what << ": " << ran.finished << " of " << ran.planned << " attempt(s) finished"
            << (ran.complete() ? "" : std::string(", stopped (") + bench::to_string(ran.stop) +
                                          "): 'mgk bench --resume' of the run submits this task again")
            << "\n";
  return exit_code_of(ran);
}

// A new run given to Slurm: written out and submitted (with --dry-run, the script shown);
// a run submitted before: its failed tasks submitted again.
ExitCode run_on_slurm(const BenchArgs& a, const CLI::App& c, store::Store& store, const Choice& choice,
                      const Globals& g, const agent::PromptLibrary& prompts) {
  const bench::BenchSpec& spec = choice.spec;
  const int attempts = int(spec.problem_list.size()) * spec.samples;
  bench::SlurmOptions slurm = a.slurm;
  slurm.tasks = slurm.tasks > 0 ? std::min(slurm.tasks, attempts) : attempts;
  if (choice.run_id != 0) {
    const std::string id = std::to_string(choice.run_id);
    if (a.dry_run) throw UsageError("--dry-run shows a new run; 'mgk bench --status " + id + "' shows run " + id);
    const SlurmRun stored = SlurmRun::load(store, choice.run_id);
    for (const auto& [flag, same] : {std::pair{"--array-tasks", slurm.tasks == stored.slurm.tasks},
                                     {"--array-parallelism", slurm.array_parallelism == stored.slurm.array_parallelism},
                                     {"--jobs", a.jobs == stored.spec.jobs},
                                     {"--max-cost", a.max_cost == stored.spec.max_cost_usd}})
      if (c.count(flag) && !same)
        throw UsageError(std::string(flag) + " was fixed when run " + id + " was submitted; leave it out to resume it");
    std::vector<std::string> sbatch;  // given now, they override the script's for the tasks submitted again
    if (c.count("--partition")) sbatch.push_back("--partition=" + a.slurm.partition);
    if (c.count("--time")) sbatch.push_back("--time=" + a.slurm.time);
    if (c.count("--gpus-per-task")) sbatch.push_back("--gpus-per-task=" + std::to_string(a.slurm.gpus_per_task));
    sbatch.insert(sbatch.end(), a.slurm.sbatch_args.begin(), a.slurm.sbatch_args.end());
    resubmit_failed(store, choice.run_id, a.retry_failed, sbatch);
    return ExitCode::kOk;
  }
  if (!a.gpus.empty())
    throw UsageError("--gpus names this machine's GPUs; with --executor slurm each task evaluates on the GPUs of "
                     "its allocation (--gpus-per-task N)");
  if (!spec.compile_only && a.slurm.gpus_per_task == 0)
    log::warning("no --gpus-per-task: each task gets only the GPUs its partition gives unasked (on most clusters none)");
  const llm::Config llm_config = llm::load_config();
  const llm::Endpoint& endpoint = llm_config.endpoint(spec.model.substr(0, spec.model.find(':')));
  const std::string key_env = endpoint.api_key_required ? endpoint.api_key_env : "";
  if (a.dry_run) {
    print_dry_run_here(spec, g, prompts);
    std::cout << "\nthe job-array script (not submitted; run 0 stands for the run's id; sbatch --array="
              << bench::array_spec(bench::every_task(slurm), slurm.array_parallelism) << "):\n"
              << script_for(slurm, bench::RunFolder::of(store.path(), "RUN-UUID"), 0, spec, key_env);
    return ExitCode::kOk;
  }
  // A missing key or price stops here, before anything is submitted.
  check_cost_limits(*llm::make_provider(spec.model, llm_config), spec);
  nlohmann::json args = spec.to_json();
  args["slurm"] = slurm.to_json();
  submit_new_run(store, store.begin_run({"bench", spec.model, args}), key_env);
  return ExitCode::kOk;
}

// The flags a rejudge takes: how this machine judges, and the new run's name. The attempts
// are the judged run's.
const std::set<std::string> kRejudgeFlags = {"--rejudge", "--resume", "--compile-only", "--gpus", "--jobs",
                                             "--name",    "--new",    "--dry-run",      "--json", "--p"};

// `--rejudge RUN` (or `--resume` of a rejudge): run RUN's finished attempts judged again here
// (bench/rejudge.h), into a new run, or into the unfinished rejudge of RUN a killed one left.
ExitCode run_rejudge(const BenchArgs& a, const CLI::App& c, store::Store& store, const Globals& g,
                     const agent::PromptLibrary& prompts, int64_t old_id, int64_t continue_run) {
  const std::string old_name = "run " + std::to_string(old_id);
  for (const CLI::Option* o : c.get_options())
    if (o->count() && !o->get_name().empty() && !kRejudgeFlags.count(o->get_name()))
      throw UsageError(o->get_name() + " is " + old_name +
                       "'s to say: a rejudge judges its attempts as they are (it takes --compile-only, --gpus, "
                       "--jobs, --name, --new, --dry-run, --json)");
  auto old = store.run(old_id);
  if (!old) throw NotFoundError("no bench run " + std::to_string(old_id) + " in " + store.path().string());
  if (old->kind != "bench")
    throw UsageError(old_name + " is " + (old->kind == "eval" ? "an " : "a ") + old->kind +
                     " run; --rejudge takes a bench run ('mgk history --runs' lists the runs)");
  const bench::BenchSpec old_spec = bench::BenchSpec::from_json(old->args, old_id);
  bench::BenchSpec spec = old_spec;
  spec.rejudge_of = old_id;
  spec.compile_only = a.compile_only;
  spec.executor = "local";
  spec.jobs = a.jobs;
  spec.gpus = parse_int_list(a.gpus, "--gpus");
  spec.max_cost_usd = 0;
  spec.name = a.name;
  if (continue_run) {  // --resume of a rejudge: it judges as it began, on what this session gives
    const bench::BenchSpec began = bench::BenchSpec::from_json(store.run(continue_run)->args, continue_run);
    if (c.count("--compile-only") && !began.compile_only)
      throw UsageError("run " + std::to_string(continue_run) + " judges on GPUs; leave --compile-only out to resume it");
    spec.compile_only = began.compile_only;
    if (!c.count("--jobs")) spec.jobs = began.jobs;
    if (!c.count("--gpus")) spec.gpus = began.gpus;
    if (!c.count("--name")) spec.name = began.name;
  }

  const std::map<bench::AttemptKey, store::AttemptSummary> judgeable =
      bench::judgeable_attempts(store.attempts_of_run(old_id));
  std::vector<bench::AttemptKey> planned;  // the old plan's order, less what cannot be judged
  const std::vector<bench::AttemptKey> old_plan = bench::planned_attempts(old_spec.problem_list, old_spec.samples);
  for (const bench::AttemptKey& k : old_plan)
    if (judgeable.count(k)) planned.push_back(k);
  if (planned.empty())
    throw UsageError(old_name + " has no finished attempt to judge: 'mgk bench --resume " + std::to_string(old_id) +
                     "' finishes it first");
  if (planned.size() < old_plan.size())
    log::warning(std::to_string(old_plan.size() - planned.size()) + " attempt(s) of " + old_name +
                 " are not finished and are not judged ('mgk bench --resume " + std::to_string(old_id) +
                 "' finishes them; a later rejudge then judges them)");

  int64_t run_id = continue_run;
  if (run_id == 0 && !a.new_run)
    for (const store::RunRecord& r : store.runs_of_kind("bench")) {
      bench::BenchSpec s;
      try {
        s = bench::BenchSpec::from_json(r.args, r.id);
      } catch (const UsageError&) {
        continue;  // written by another version
      }
      if (s.rejudge_of != old_id || s.compile_only != spec.compile_only || alive_here(r)) continue;
      run_id = r.id;
      break;
    }
  if (auto r = store.run(run_id); r) {
    if (r->status == store::Status::kDone &&
        bench::remaining_work(planned, store.attempts_of_run(run_id), false).to_run.empty()) {
      std::cout << "run " << run_id << " judged " << old_name << "'s kernels already: 'mgk report " << old_id << " "
                << run_id << "' sets the two side by side" << (continue_run ? "" : "; give --new to judge them again")
                << "\n";
      return ExitCode::kOk;
    }
    if (alive_here(*r))
      throw UsageError("run " + std::to_string(run_id) + " is being run by process " + std::to_string(*r->pid) +
                       "; let it finish or stop it first");
    if (!continue_run)
      log::info("run " + std::to_string(run_id) + ", the rejudge of " + old_name + " begun " + r->created_at +
                ", continues (--new starts another)");
  }
  check_name_is_free(store, spec.name, run_id);
  if (a.dry_run) {
    size_t kernels = 0;
    for (const auto& k : planned) {
      std::set<std::string> distinct;
      for (const auto& e : store.evaluations_of_attempt(judgeable.at(k).id)) distinct.insert(e.kernel_hash);
      kernels += distinct.size();
    }
    std::cout << "would judge " << kernels << " kernel(s) of " << planned.size() << " attempt(s) of " << old_name
              << (spec.compile_only ? ", compiling only" : " on this machine's GPUs") << ", calling no model\n";
    return ExitCode::kOk;
  }
  Here here = set_up_here(spec, g, prompts);
  if (run_id == 0) {
    run_id = store.begin_run({"bench", spec.model, spec.to_json()});
  } else {
    nlohmann::json args = store.reopen_run(run_id).args;
    args.update(spec.to_json());
    store.set_run_args(run_id, args);
  }
  const bench::Rejudger rejudger(
      store, run_id, judgeable,
      [&here](const std::string& problem, const std::filesystem::path& kernel, const bench::Rejudger::Status& status) {
        return bench::PooledJudge(here.p.sessions.at(problem).eval, here.pool.get(), &interrupt_flag(), status)
            .judge(kernel);
      },
      spec.compile_only, &interrupt_flag());
  const std::string title = title_of("mgk bench run " + std::to_string(run_id) + " (judging " + old_name + " again)",
                                     spec, here);
  const Ran ran = run_here(a, store, run_id, spec, planned, here, title, 0, [&rejudger](bench::LocalExecutor&) {
    return [&rejudger](const bench::WorkItem& item, const bench::AttemptHooks& hooks) {
      return rejudger.run(item, hooks.status);
    };
  });
  end_run(a, store, run_id, ran.complete(), ran.stop);
  if (!a.json) std::cout << "side by side with the run judged: mgk report " << old_id << " " << run_id << "\n";
  return exit_code_of(ran);
}

ExitCode run_bench(const BenchArgs& a, const CLI::App& c, const Globals& g) {
  if (!a.shard.empty() || !a.run_file.empty()) return run_array_task(a, g);
  if (a.status > 0) {
    store::Store store = open_store_to_read(g);
    print_status(store, a.status, a.json);
    return ExitCode::kOk;
  }
  if (a.merge > 0) {
    store::Store store = open_store(g);
    if (merge_shards(store, a.merge)) {
      end_run(a, store, a.merge, true, bench::StopReason::kFinished);
      return ExitCode::kOk;
    }
    const std::string id = std::to_string(a.merge);
    std::cout << "run " << id << " is not complete yet: 'mgk bench --status " << id << "' says what is left; merge "
              << "again when it is (merging twice adds only what is new)\n";
    return ExitCode::kOk;
  }
  store::Store store = open_store(g);
  const agent::PromptLibrary prompts = agent::PromptLibrary::load_default();
  install_interrupt_handler();
  if (a.rejudge > 0) return run_rejudge(a, c, store, g, prompts, a.rejudge, 0);
  if (auto r = store.run(a.resume); a.resume > 0 && r && r->kind == "bench")
    if (const int64_t of = r->args.value("rejudge_of", int64_t(0)); of > 0)
      return run_rejudge(a, c, store, g, prompts, of, a.resume);
  Choice choice = choose_run(a, c, store, prompts.version());
  const bench::BenchSpec& spec = choice.spec;
  check_name_is_free(store, spec.name, choice.run_id ? choice.run_id : choice.complete_run);
  if (choice.complete_run && !a.dry_run) {
    const std::string id = std::to_string(choice.complete_run);
    if (auto run = store.run(choice.complete_run); run && run->name() != spec.name) {  // renamed
      nlohmann::json args = run->args;
      args["name"] = spec.name;
      store.set_run_args(run->id, args);
      log::info("run " + id + " is now named '" + spec.name + "'");
    }
    int failed = 0;
    for (const auto& at : store.attempts_of_run(choice.complete_run)) failed += at.status == store::Status::kFailed;
    std::cout << "run " << id << (a.resume ? " is complete, nothing to resume" : " with these arguments is complete")
              << ": 'mgk report " << id << "' shows it" << (a.resume ? "" : "; give --new to run it again")
              << (failed ? "; --retry-failed runs its " + std::to_string(failed) +
                               " attempt(s) cut short by the provider or the evaluator again"
                         : std::string())
              << "\n";
    return ExitCode::kOk;
  }
  if (spec.executor == "slurm") {
    if (!choice.changed.empty()) log::info(choice.changed);
    return run_on_slurm(a, c, store, choice, g, prompts);
  }
  for (const std::string& flag : kSlurmFlags)
    if (c.count(flag)) throw UsageError(flag + " is for --executor slurm");
  if (a.dry_run) {
    print_dry_run_here(spec, g, prompts);
    return ExitCode::kOk;
  }
  Here here = set_up_here(spec, g, prompts);
  if (!choice.changed.empty()) log::info(choice.changed);
  int64_t run_id = choice.run_id;
  if (run_id == 0) run_id = store.begin_run({"bench", spec.model, spec.to_json()});
  else {
    nlohmann::json args = store.reopen_run(run_id).args;
    args.update(spec.to_json());  // the limits this resume took, for the next one
    store.set_run_args(run_id, args);
  }
  const Ran ran = run_here(a, store, run_id, spec, bench::planned_attempts(spec.problem_list, spec.samples), here,
                           title_of("mgk bench run " + std::to_string(run_id), spec, here), spec.max_cost_usd,
                           model_attempts(store, run_id, here, prompts));
  end_run(a, store, run_id, ran.complete(), ran.stop);
  return exit_code_of(ran);
}

}  // namespace

void add_bench_command(CLI::App& root, Globals& g) {
  auto a = std::make_shared<BenchArgs>();
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
  c->add_option("--gpus", a->gpus,
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
  c->callback([a, c, &g] {
    g.exit_code = run_bench(*a, *c, g);
  });
}

}  // namespace mgk::cli
