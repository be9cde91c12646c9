// The table of subcommands. Add a subcommand: write cli/cmd_NAME.cc defining
// `void add_NAME_command(CLI::App&, Globals&)`, declare it here and list it in commands.cc.
#pragma once
#include <string>
#include <vector>

#include "cli/app.h"

namespace mgk::cli {

struct CommandEntry {
  const char* name;
  Register add;
};

const std::vector<CommandEntry>& command_table();

// " (did you mean 'eval'?)" when argv names an unknown subcommand close to a known one.
std::string suggestion_for(int argc, char** argv);

void add_doctor_command(CLI::App&, Globals&);
void add_problems_command(CLI::App&, Globals&);
void add_eval_command(CLI::App&, Globals&);
void add_calibrate_command(CLI::App&, Globals&);
void add_history_command(CLI::App&, Globals&);
void add_show_command(CLI::App&, Globals&);
void add_merge_command(CLI::App&, Globals&);
void add_generate_command(CLI::App&, Globals&);
void add_tune_command(CLI::App&, Globals&);
void add_bench_command(CLI::App&, Globals&);
void add_report_command(CLI::App&, Globals&);
void add_export_command(CLI::App&, Globals&);

}  // namespace mgk::cli
