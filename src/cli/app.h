// The mgk command line: one table of subcommands (app.cc), one small file per subcommand.
#pragma once
#include <string>

#include <CLI/CLI.hpp>

#include "common/error.h"

namespace mgk::cli {

// Options every subcommand sees, read once in app.cc.
struct Globals {
  bool verbose = false;
  std::string db;  // --db, else $MGK_DB, else $XDG_DATA_HOME/mgk/mgk.db (common/env.h)
  ExitCode exit_code = ExitCode::kOk;  // set by the subcommand that ran
};

// Each subcommand file defines one of these; app.cc lists them all in one table.
using Register = void (*)(CLI::App& root, Globals& globals);

int run(int argc, char** argv);

}  // namespace mgk::cli
