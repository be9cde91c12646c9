// mgk show ATTEMPT | --run RUN: everything stored about one attempt, or one run (the
// eval and tune runs `mgk history` lists as "run N").
#include <iostream>

#include "cli/commands.h"
#include "cli/options.h"
#include "store/attempt_view.h"
#include "store/records_json.h"
#include "store/store.h"

namespace mgk::cli {

namespace {

struct ShowArgs {
  int64_t id = 0;
  int64_t run = 0;
  bool kernel = false;
  bool json = false;
};

void show_run(const ShowArgs& a, store::Store& s) {
  auto run = s.run(a.run);
  if (!run)
    throw NotFoundError("no run " + std::to_string(a.run) + " in " + s.path().string() +
                        " ('mgk history' lists them)");
  const std::vector<store::AttemptSummary> attempts = s.attempts_of_run(a.run);
  if (!attempts.empty() && !a.json) {
    std::cout << store::render_agent_run(*run, attempts);
    return;
  }
  auto evaluations = s.evaluations_of_run(a.run);
  if (a.json && !attempts.empty())
    std::cout << nlohmann::json{{"run", *run}, {"attempts", attempts}, {"evaluations", evaluations}}.dump(2) << "\n";
  else if (a.json)
    std::cout << nlohmann::json{{"run", *run}, {"evaluations", evaluations}}.dump(2) << "\n";
  else
    std::cout << store::render_run(*run, evaluations);
}

void run_show(const ShowArgs& a, const Globals& g) {
  if ((a.id > 0) == (a.run > 0)) throw UsageError("give an attempt id or --run RUN_ID ('mgk history' lists both)");
  store::Store s = open_store_to_read(g);
  if (a.run > 0) return show_run(a, s);
  auto detail = s.attempt_detail(a.id);
  if (!detail)
    throw NotFoundError("no attempt " + std::to_string(a.id) + " in " + s.path().string() +
                        " ('mgk history' lists them)");
  if (a.kernel) {
    if (!detail->best_kernel_source)
      throw Error("attempt " + std::to_string(a.id) + " has no correct kernel ('mgk show " +
                      std::to_string(a.id) + "' shows what went wrong)",
                  ExitCode::kIncorrect);
    std::cout << *detail->best_kernel_source;
    return;
  }
  if (a.json)
    std::cout << nlohmann::json(*detail).dump(2) << "\n";
  else
    std::cout << store::render_attempt(*detail);
}

}  // namespace

void add_show_command(CLI::App& root, Globals& g) {
  auto a = std::make_shared<ShowArgs>();
  CLI::App* c = root.add_subcommand(
      "show", "Everything about one attempt (each turn's prompt and reply, evaluations, kernel) or one run");
  c->add_option("attempt", a->id, "Attempt id (from 'mgk history')")->check(at_least(1));
  c->add_option("--run", a->run, "Show this run instead (the 'run N' lines of 'mgk history')")->check(at_least(1));
  c->add_flag("--kernel", a->kernel, "Print only the best kernel's source");
  c->add_flag("--json", a->json, "Print everything as JSON");
  c->callback([a, &g] {
    run_show(*a, g);
    g.exit_code = ExitCode::kOk;
  });
}

}  // namespace mgk::cli
