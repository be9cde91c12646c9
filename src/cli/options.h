// Small pieces several subcommands share: list parsing, the store, the calibration.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "cli/app.h"
#include "eval/machine.h"
#include "store/store.h"

namespace mgk::cli {

// "0,1,3" -> {0,1,3}; UsageError naming the option on anything else.
std::vector<int> parse_int_list(const std::string& text, const std::string& option);
// "small,large" -> {"small","large"}
std::vector<std::string> split_list(const std::string& text);

// Checks for numeric options, applied to the text as typed: a finite number above `min`
// (above) or from `min` on (at_least). "nan", "inf", "-5" for a timeout fail with one line
// naming the option ("--timeout: must be a number above 0, not '-5'").
CLI::Validator above(double min);
CLI::Validator at_least(double min);

// The group options of subcommands that run on GPUs: --world N (recording in *world_given
// whether it was typed) and --gpus LIST.
void add_group_options(CLI::App* c, int* world, bool* world_given, std::string* gpus);
// The rank count they ask for: --gpus alone sets it to the number of GPUs it names (one
// per rank; a GPU may be named twice). A typed --world must agree with a --gpus list:
// UsageError otherwise.
int world_from(int world, bool world_given, const std::vector<int>& gpus);

// For subcommands that time kernels (tune, generate): UsageError when --gpus names a GPU
// twice, since ranks sharing a GPU are checked but not timed (eval::ranks_share_gpu).
void require_own_gpus(const std::vector<int>& gpus, const std::string& command);

// The store --db / $MGK_DB / the default names (common/env.h), created if missing (with
// the default's folder), migrated.
store::Store open_store(const Globals& g);
// The same store for commands that only read it: it must exist, nothing is written.
store::Store open_store_to_read(const Globals& g);

// Peaks of the latest calibration of this machine, if `mgk calibrate` was run
// (eval/calibration.h).
std::optional<eval::Peaks> stored_peaks(const Globals& g, const eval::MachineInfo& m);

}  // namespace mgk::cli
