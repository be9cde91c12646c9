// mgk history: the attempts in the store, newest first, one line each.
#include <iostream>

#include "cli/commands.h"
#include "common/env.h"
#include "store/history_table.h"
#include "store/records_json.h"
#include "store/store.h"
#include "store/timestamp.h"

namespace mgk::cli {

namespace {

struct HistoryArgs {
  std::string problem, model, status, since, until;
  int64_t run = 0;
  int limit = 20;
  bool json = false;
};

void run_history(const HistoryArgs& a, const Globals& g) {
  store::HistoryFilter f;
  if (!a.problem.empty()) f.problem = a.problem;
  if (!a.model.empty()) f.model = a.model;
  if (!a.status.empty()) f.status = store::status_from_string(a.status);
  if (!a.since.empty()) f.since = store::timestamp_bound(a.since, false);
  if (!a.until.empty()) f.until = store::timestamp_bound(a.until, true);
  if (a.run > 0) f.run_id = a.run;
  if (a.limit < 0) throw UsageError("--limit must be 0 (no limit) or more");
  f.limit = a.limit;

  store::Store s = store::Store::open_read_only(
      database_path(g.db.empty() ? std::nullopt : std::optional<std::string>(g.db)));
  auto attempts = s.history(f);
  if (a.json) {
    std::cout << nlohmann::json(attempts).dump(2) << "\n";
    return;
  }
  std::cout << store::render_history_table(attempts);
  if (a.limit > 0 && int(attempts.size()) == a.limit)
    std::cout << "(the newest " << a.limit << "; --limit N or --limit 0 for more; "
              << "'mgk show ID' for one attempt)\n";
}

}  // namespace

void add_history_command(CLI::App& root, Globals& g) {
  auto a = std::make_shared<HistoryArgs>();
  CLI::App* c = root.add_subcommand("history", "List past attempts, newest first");
  c->add_option("--problem", a->problem, "Only these problems (a glob: 'tp/*')");
  c->add_option("--model", a->model, "Only these models (a glob: 'anthropic:*')");
  c->add_option("--status", a->status,
                "Only attempts in this state: running, done, interrupted, failed");
  c->add_option("--since", a->since, "Started on or after DATE (UTC): YYYY-MM-DD[THH:MM[:SS]]");
  c->add_option("--until", a->until, "Started on or before DATE (UTC), the whole day for a date");
  c->add_option("--run", a->run, "Only the attempts of this run");
  c->add_option("--limit", a->limit, "At most N attempts; 0 for all")->capture_default_str();
  c->add_flag("--json", a->json, "Print the attempts as a JSON array");
  c->callback([a, &g] {
    run_history(*a, g);
    g.exit_code = ExitCode::kOk;
  });
}

}  // namespace mgk::cli
