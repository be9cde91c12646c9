#include "bench_run/choose_run.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <iostream>
#include <map>

#include "bench_run/slurm_run.h"
#include "bench_run/gpu_pool.h"
#include "bench_run/work_list.h"
#include "common/error.h"
#include "common/log.h"
#include "common/name_patterns.h"
#include "store/rows.h"

namespace mgk::bench_run {
namespace {

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
std::string take_changed_limits(const Request& a, int64_t run_id, const BenchSpec& fresh,
                                BenchSpec& s) {
  std::string changed;
  auto take = [&](const char* flag, auto& field, const auto& value, const std::string& was, const std::string& now) {
    if (!a.was_typed(flag) || field == value) return;
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
  take("--gpus", s.gpus, fresh.gpus, gpu_list(s.gpus), gpu_list(fresh.gpus));
  take("--name", s.name, fresh.name, "'" + s.name + "'", "'" + fresh.name + "'");
  if (changed.empty()) return "";
  return "run " + std::to_string(run_id) + " continues with " + changed +
         " (for the calls still to come; what finished keeps what it ran under)";
}

BenchSpec spec_from_flags(const Request& a, const std::string& prompt_version) {
  BenchSpec s;
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
  s.gpus = a.gpus;
  s.max_cost_usd = a.max_cost;
  s.name = a.name;
  return s;
}

// The run is marked running on another machine: whether that process lives is unknowable.
bool running_elsewhere(const store::RunRecord& r) {
  return r.status == store::Status::kRunning && r.host != store::rows::host_name();
}

}  // namespace

void check_name_is_free(store::Store& store, const std::string& name, int64_t run) {
  if (name.empty()) return;
  if (name.find_first_not_of("0123456789") == std::string::npos)
    throw UsageError("--name '" + name + "' is a number, which 'mgk report' would read as a run id; add a letter");
  if (auto owner = store.run_named("bench", name); owner && owner->id != run)
    throw UsageError("run " + std::to_string(owner->id) + " is already named '" + name +
                     "': choose another name, or continue that run with --resume " + std::to_string(owner->id));
}

bool alive_here(const store::RunRecord& r) {
  if (r.status != store::Status::kRunning || !r.pid || r.host != store::rows::host_name()) return false;
  return *r.pid != getpid() && (kill(pid_t(*r.pid), 0) == 0 || errno == EPERM);
}

Choice choose_run(const Request& a, store::Store& store, const std::string& prompt_version) {
  BenchSpec fresh = spec_from_flags(a, prompt_version);
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
    BenchSpec s = BenchSpec::from_json(run->args, run->id);
    // More samples grow the run: the attempts done are kept, the new samples are added (the
    // n of pass@k grows, nothing else about the benchmark changes). Fewer would drop work.
    std::string grown;
    if (a.was_typed("--samples") && a.samples != s.samples) {
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
      if (a.was_typed(flag) && stored[key] != given[key])
        throw UsageError("run " + std::to_string(a.resume) + " has " + flag + " " + stored[key].dump() +
                         "; leave " + flag + " out to resume it (or start a new run)");
    if (!grown.empty()) log::info(grown);
    if (s.prompt_version != prompt_version)
      log::warning("run " + std::to_string(run->id) + " began with prompts " + s.prompt_version +
                   "; its remaining attempts use " + prompt_version);
    if (run->status == store::Status::kDone &&
        remaining_work(planned_attempts(s.problem_list, s.samples), store.attempts_of_run(run->id),
                              a.retry_failed)
            .to_run.empty()) {
      if (a.was_typed("--name")) s.name = fresh.name;  // a label: a complete run may be renamed
      return {s, 0, run->id};  // complete: left as it is (its end time too)
    }
    const std::string changed = take_changed_limits(a, run->id, fresh, s);
    return {s, run->id, 0, changed};
  }
  if (a.model.empty()) throw UsageError("give --model (and --problems, --samples), or --resume RUN");
  if (a.samples < 1) throw UsageError("--samples must be at least 1");
  if (a.turns < 0 || (a.was_typed("--turns") && a.turns < 1)) throw UsageError("--turns must be at least 1");
  if (a.jobs < 1) throw UsageError("--jobs must be at least 1");
  fresh.problem_list = expand_problems(fresh.problems);
  if (a.new_run) return {fresh, 0, 0};
  for (const store::RunRecord& r : store.runs_of_kind("bench")) {
    const bool on_slurm = SlurmRun::is_slurm(r);
    if (!on_slurm && (alive_here(r) || running_elsewhere(r))) continue;  // someone may be at work on it
    BenchSpec s;
    try {
      s = BenchSpec::from_json(r.args, r.id);
    } catch (const UsageError&) {
      continue;  // written by another version
    }
    if (s.identity() != fresh.identity()) continue;
    const WorkList work =
        remaining_work(planned_attempts(s.problem_list, s.samples), store.attempts_of_run(r.id), a.retry_failed);
    // A done run's failed attempts are finished, unless --retry-failed asks for them again.
    if (r.status == store::Status::kDone && work.to_run.empty()) return {s, 0, r.id};
    const int finished = int(work.finished.size());
    const std::string what =
        "run " + std::to_string(r.id) + " (started " + r.created_at + ") has the same arguments" +
        (on_slurm ? " and is on Slurm ('mgk bench --status " + std::to_string(r.id) + "' says how far)"
                  : " and " + std::to_string(finished) + " of " + std::to_string(s.problem_list.size() * size_t(s.samples)) +
                        " attempts finished");
    if (a.may_ask) {
      std::cout << what << ". Continue it? [Y/n] " << std::flush;
      std::string answer;
      std::getline(std::cin, answer);
      if (!answer.empty() && answer[0] != 'y' && answer[0] != 'Y') return {fresh, 0, 0};
    } else {
      log::info(what + ": continuing it (--new starts another run)");
    }
    const std::string changed = take_changed_limits(a, r.id, fresh, s);
    return {s, r.id, 0, changed};
  }
  return {fresh, 0, 0};
}

}  // namespace mgk::bench_run
