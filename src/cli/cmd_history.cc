// mgk history: what the store holds, newest first, one line each: the attempts of agent
// runs (generate, bench) and the runs that have none (eval, tune).
#include <algorithm>
#include <iostream>

#include "cli/commands.h"
#include "cli/options.h"
#include "common/env.h"
#include "common/name_patterns.h"
#include "store/history_table.h"
#include "store/records_json.h"
#include "store/runs_table.h"
#include "store/store.h"
#include "store/timestamp.h"

namespace mgk::cli {

namespace {

struct HistoryArgs {
  std::vector<std::string> problems;  // names and globs (common/name_patterns.h)
  std::string problems_file, model, status, since, until, kinds;
  int64_t run = 0;
  int limit = 20;
  bool json = false, runs = false;
};

// --runs: every run, one line each (store/runs_table.h), filtered as the attempts are.
void list_runs(const HistoryArgs& a, const store::HistoryFilter& f, store::Store& s) {
  std::vector<store::RunRecord> runs;
  const std::vector<std::string> kinds =
      f.kinds.empty() ? std::vector<std::string>{"generate", "bench", "eval", "tune"} : f.kinds;
  for (const std::string& kind : kinds) {
    store::check_run_kind(kind);
    for (store::RunRecord& r : s.runs_of_kind(kind)) {
      if (f.model && !glob_match(*f.model, r.model)) continue;
      if (f.status && r.status != *f.status) continue;
      if ((f.since && r.created_at < *f.since) || (f.until && r.created_at > *f.until)) continue;
      if (f.run_id && r.id != *f.run_id) continue;
      runs.push_back(std::move(r));
    }
  }
  std::sort(runs.begin(), runs.end(), [](const auto& x, const auto& y) {
    return x.created_at != y.created_at ? x.created_at > y.created_at : x.id > y.id;
  });
  if (a.limit > 0 && int(runs.size()) > a.limit) runs.resize(size_t(a.limit));
  if (a.json) {
    std::cout << nlohmann::json(runs).dump(2) << "\n";
    return;
  }
  std::cout << store::render_runs_table(runs);
  if (!runs.empty())
    std::cout << "'mgk report RUN' for a bench run, 'mgk show --run RUN' for any run\n";
}

void run_history(const HistoryArgs& a, const Globals& g) {
  store::HistoryFilter f;
  if (const NamePatterns p = NamePatterns::parse(a.problems, a.problems_file); !p.all()) f.problem = p.text();
  if (!a.model.empty()) f.model = a.model;
  if (!a.status.empty()) f.status = store::status_from_string(a.status);
  if (!a.since.empty()) f.since = store::timestamp_bound(a.since, false);
  if (!a.until.empty()) f.until = store::timestamp_bound(a.until, true);
  if (a.run > 0) f.run_id = a.run;
  f.kinds = split_list(a.kinds);  // checked by the store
  f.limit = a.limit;

  store::Store s = open_store_to_read(g);
  if (a.runs) {
    if (f.problem) throw UsageError("--runs lists whole runs; --problem picks attempts (leave one out)");
    list_runs(a, f, s);
    return;
  }
  auto entries = store::merge_history(s.history(f), s.runs_without_attempts(f), a.limit);
  if (a.json) {
    std::cout << nlohmann::json(entries).dump(2) << "\n";
    return;
  }
  std::cout << store::render_history_table(entries);
  if (a.limit > 0 && int(entries.size()) == a.limit)
    std::cout << "(the newest " << a.limit << "; --limit N or --limit 0 for more; "
              << "'mgk show ID' for an attempt, 'mgk show --run N' for a run)\n";
}

}  // namespace

void add_history_command(CLI::App& root, Globals& g) {
  auto a = std::make_shared<HistoryArgs>();
  CLI::App* c = root.add_subcommand(
      "history", "List past attempts (generate, bench) and runs (eval, tune), newest first");
  c->add_option("--kind", a->kinds,
                "Only these kinds of run, comma-separated: generate, bench, eval, tune (default: all)");
  c->add_option("--problem,--problems", a->problems,
                "Only these problems: names and globs, comma-separated, repeatable ('tp/*,collectives/all_reduce')");
  c->add_option("--problems-file", a->problems_file,
                "Only these problems too, one name or glob per line ('#' comments)");
  c->add_option("--model", a->model, "Only these models (a glob: 'anthropic:*')");
  c->add_option("--status", a->status,
                "Only what is in this state: running, done, interrupted, failed");
  c->add_option("--since", a->since, "Started on or after DATE (UTC): YYYY-MM-DD[THH:MM[:SS]]");
  c->add_option("--until", a->until, "Started on or before DATE (UTC), the whole day for a date");
  c->add_option("--run", a->run, "Only this run (its attempts)");
  c->add_option("--limit", a->limit, "At most N lines; 0 for all")
      ->capture_default_str()
      ->check(at_least(0));
  c->add_flag("--runs", a->runs,
              "One line per run instead: id, kind, model, problems x samples, status, pass@1, cost");
  c->add_flag("--json", a->json,
              "Print a JSON array: attempts and runs as 'mgk show --json' has them, with \"row\": "
              "\"attempt\" or \"run\"");
  c->callback([a, &g] {
    run_history(*a, g);
    g.exit_code = ExitCode::kOk;
  });
}

}  // namespace mgk::cli
