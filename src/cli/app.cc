#include "cli/app.h"

#include <csignal>
#include <cstdio>
#include <iostream>

#include "cli/commands.h"
#include "cli/parse_errors.h"
#include "common/error.h"
#include "common/interrupt.h"
#include "common/log.h"

const char* mgk_git_commit();  // generated at build time (cmake/git_commit.cmake)

namespace mgk::cli {

int run(int argc, char** argv) {
  CLI::App app{"mgk: get fast multi-GPU CUDA kernels written, checked and tuned.\n"
               "Run 'mgk doctor' first on a new machine; 'mgk COMMAND --help' for details."};
  app.set_version_flag("--version", std::string("mgk ") + MGK_VERSION + " (commit " + mgk_git_commit() + ")");
  app.require_subcommand(1);
  app.fallthrough();
  Globals globals;
  app.add_flag("-v,--verbose", globals.verbose, "More detail, and the context of errors");
  app.add_option("--db", globals.db, "SQLite store (default: $MGK_DB, else $XDG_DATA_HOME/mgk/mgk.db, i.e. ~/.local/share/mgk/mgk.db)");

  for (const auto& entry : command_table()) entry.add(app, globals);
  // Before any command's callback runs: -v turns the debug lines on (HTTP tries, ...).
  app.parse_complete_callback([&globals] { log::set_verbose(globals.verbose); });

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() != 0) {
      std::string command;  // the subcommand being parsed, if one was named
      for (CLI::App* sub : app.get_subcommands()) command = sub->get_name();
      log::error(reword_parse_error(e.what(), command) + suggestion_for(argc, argv));
      return int(ExitCode::kUsage);
    }
    return app.exit(e);  // --help, --version
  } catch (const Interrupted& e) {
    log::error(e.what());
    return int(ExitCode::kInterrupted);
  } catch (const Error& e) {
    log::error(e.what());
    if (globals.verbose)
      for (const auto& line : e.context()) std::cerr << "  " << line << "\n";
    else if (!e.context().empty())
      std::cerr << "  (run with --verbose for context)\n";
    return int(e.code());
  } catch (const std::exception& e) {
    log::error(std::string("internal error: ") + e.what());
    return int(ExitCode::kInfrastructure);
  }
  return int(globals.exit_code);
}

}  // namespace mgk::cli
