// mgk show ATTEMPT: everything stored about one attempt.
#include <iostream>

#include "cli/commands.h"
#include "common/env.h"
#include "store/attempt_view.h"
#include "store/records_json.h"
#include "store/store.h"

namespace mgk::cli {

namespace {

struct ShowArgs {
  int64_t id = 0;
  bool kernel = false;
  bool json = false;
};

void run_show(const ShowArgs& a, const Globals& g) {
  store::Store s = store::Store::open_read_only(
      database_path(g.db.empty() ? std::nullopt : std::optional<std::string>(g.db)));
  auto detail = s.attempt_detail(a.id);
  if (!detail)
    throw UsageError("no attempt " + std::to_string(a.id) + " in " + s.path().string() +
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
      "show", "Everything about one attempt: each turn's prompt and reply, evaluations, kernel");
  c->add_option("attempt", a->id, "Attempt id (from 'mgk history')")->required();
  c->add_flag("--kernel", a->kernel, "Print only the best kernel's source");
  c->add_flag("--json", a->json, "Print everything as JSON");
  c->callback([a, &g] {
    run_show(*a, g);
    g.exit_code = ExitCode::kOk;
  });
}

}  // namespace mgk::cli
