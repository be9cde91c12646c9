// mgk export RUN DIR: a run as files (conversations, kernels, evaluations, report) to share
// without the store.
#include <iostream>

#include "cli/commands.h"
#include "common/env.h"
#include "report/export_run.h"
#include "store/store.h"

namespace mgk::cli {
namespace {

struct ExportArgs {
  int64_t run = 0;
  std::string dir;
};

}  // namespace

void add_export_command(CLI::App& root, Globals& g) {
  auto a = std::make_shared<ExportArgs>();
  CLI::App* c = root.add_subcommand(
      "export", "A run as files to share: every conversation (Markdown, JSON), kernel, evaluation, and its report");
  c->add_option("run", a->run, "Run id ('mgk history' shows them)")->required();
  c->add_option("dir", a->dir, "A new folder to write (or an empty one)")->required();
  c->callback([a, &g] {
    store::Store store = store::Store::open_read_only(
        database_path(g.db.empty() ? std::nullopt : std::optional<std::string>(g.db)));
    const report::ExportCounts n = report::export_run(store, a->run, a->dir);
    std::cout << "exported run " << a->run << " to " << a->dir << ": " << n.attempts << " attempt(s), " << n.kernels
              << " kernel(s), " << n.evaluations << " evaluation(s)" << (n.with_report ? ", the report" : "") << "\n";
    g.exit_code = ExitCode::kOk;
  });
}

}  // namespace mgk::cli
