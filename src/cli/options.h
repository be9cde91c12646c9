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

// The group options of subcommands that run on GPUs: --world N (recording in *world_given
// whether it was typed) and --gpus LIST.
void add_group_options(CLI::App* c, int* world, bool* world_given, std::string* gpus);
// The rank count they ask for: --gpus alone sets it to the number of GPUs it names; a typed
// --world wins (the evaluator rejects a --gpus list of another length).
int world_from(int world, bool world_given, const std::vector<int>& gpus);

// For subcommands that time kernels (tune, generate): UsageError when --gpus names a GPU
// twice, since ranks sharing a GPU are checked but not timed (eval::ranks_share_gpu).
void require_own_gpus(const std::vector<int>& gpus, const std::string& command);

store::Store open_store(const Globals& g);
store::MachineKey machine_key(const eval::MachineInfo& m);

// Peaks of the latest calibration of this machine, if `mgk calibrate` was run.
std::optional<eval::Peaks> stored_peaks(const Globals& g, const eval::MachineInfo& m);

}  // namespace mgk::cli
