#include "cli/commands.h"

#include <algorithm>
#include <string_view>

namespace mgk::cli {

const std::vector<CommandEntry>& command_table() {
  static const std::vector<CommandEntry> table = {
      {"doctor", add_doctor_command},
      {"problems", add_problems_command},
      {"eval", add_eval_command},
      {"calibrate", add_calibrate_command},
      {"history", add_history_command},
      {"show", add_show_command},
      {"merge", add_merge_command},
      {"generate", add_generate_command},
      {"tune", add_tune_command},
      {"bench", add_bench_command},
      {"report", add_report_command},
      {"export", add_export_command},
  };
  return table;
}

namespace {
size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}
}  // namespace

std::string suggestion_for(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg.empty() || arg[0] == '-') continue;
    const CommandEntry* best = nullptr;
    size_t best_d = 3;
    for (const auto& c : command_table()) {
      if (arg == c.name) return "";
      size_t d = edit_distance(arg, c.name);
      if (d < best_d) best_d = d, best = &c;
    }
    return best ? std::string(" (did you mean '") + best->name + "'?)" : "";
  }
  return "";
}

}  // namespace mgk::cli
