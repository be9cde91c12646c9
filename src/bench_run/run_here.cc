#include "bench_run/run_here.h"

#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <memory>

#include "bench_run/progress.h"
#include "common/interrupt.h"
#include "report/bench_report.h"
#include "report/render_data.h"
#include "report/render_text.h"
#include "store/history_table.h"

namespace mgk::bench_run {
namespace {

// Finished attempts of the run: what the progress display starts from.
Progress::Counts counts_of(store::Store& store, const std::vector<int64_t>& finished,
                                  const std::optional<double>& spent) {
  Progress::Counts c;
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

}  // namespace

MakeRunAttempt model_attempts(store::Store& store, int64_t run_id, Station& here,
                              const agent::PromptLibrary& prompts) {
  return [&store, run_id, &here, &prompts](LocalExecutor& executor) -> RunAttempt {
    auto runner = std::make_shared<AttemptRunner>(
        run_id, std::move(here.sessions),
        AttemptDeps{here.provider.get(), &store, &prompts, here.pool.get(), &interrupt_flag(),
                           &executor.stop_flag(), &executor});
    return [runner](const WorkItem& item, const AttemptHooks& hooks) { return runner->run(item, hooks); };
  };
}

Ran run_here(const Request& a, store::Store& store, int64_t run_id, const BenchSpec& spec,
             const std::vector<AttemptKey>& planned, Station& here, const std::string& title, double max_cost,
             const MakeRunAttempt& make_run_attempt) {
  const WorkList work = remaining_work(planned, store.attempts_of_run(run_id), a.retry_failed);
  // A model with no price has no known spend (and no budget: the pre-flight refuses one). A
  // rejudge calls no model: it spends nothing (its copied turns' cost is the judged run's).
  const bool priced = !here.provider || here.provider->price().has_value();
  const std::optional<double> known_before = here.provider ? store.run(run_id)->cost_usd : 0.0;
  const double spent_before = known_before.value_or(0);
  const Progress::Style style = a.json                     ? Progress::Style::kJson
                                       : isatty(STDOUT_FILENO) ? Progress::Style::kLive
                                                               : Progress::Style::kLines;
  Progress progress(std::cout, style, title, int(planned.size()), std::min(spec.jobs, int(work.to_run.size())),
                           counts_of(store, work.finished, priced ? known_before : std::nullopt));

  LocalExecutor executor({spec.jobs, max_cost, spent_before, 5}, &interrupt_flag());
  const RunAttempt run_attempt = make_run_attempt(executor);
  executor.on_error = [&](const WorkItem& item, const std::string& error) {
    progress.note("error in " + item.key.problem + " sample " + std::to_string(item.key.sample) + ": " + error);
  };
  const StopReason stop = executor.run(work.to_run, [&](const WorkItem& item, int worker) {
    AttemptHooks hooks;
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
  const size_t left = remaining_work(planned, store.attempts_of_run(run_id), false).to_run.size();
  return {stop, planned.size() - left, planned.size()};
}

ExitCode exit_code_of(const Ran& ran) {
  if (ran.complete()) return ExitCode::kOk;
  switch (ran.stop) {
    case StopReason::kBudget: return ExitCode::kLimit;  // the budget stopped new work: resumable
    case StopReason::kErrors: return ExitCode::kInfrastructure;
    default: return ExitCode::kInterrupted;
  }
}

void end_run(const Request& a, store::Store& store, int64_t run_id, bool complete, StopReason stop) {
  report::RunReport rep = report::build_report(store, run_id, a.ps);
  store.finish_run(run_id, complete ? store::Status::kDone : store::Status::kInterrupted,
                   report::summary_json(rep.metrics));
  rep.data.run = *store.run(run_id);  // its status and end as just stored
  const std::string id = std::to_string(run_id);
  if (a.json) {
    std::cout << nlohmann::json{{"event", "report"}, {"run", run_id}, {"complete", complete},
                                {"stopped", to_string(stop)}, {"summary", report::summary_json(rep.metrics)}}
                     .dump()
              << std::endl;
    return;
  }
  std::cout << "\n" << report::render_text({rep}, false);
  if (!complete)
    std::cout << "\nstopped (" << to_string(stop) << ") before the end: 'mgk bench --resume " << id
              << "' continues" << (stop == StopReason::kBudget ? " (with a larger --max-cost)" : "") << "\n";
  std::cout << "the report as HTML: mgk report " << id << " --format html -o report-" << id << ".html\n";
}

}  // namespace mgk::bench_run
