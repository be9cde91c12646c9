#include "cli/options.h"

#include <sstream>

#include "common/env.h"
#include "common/error.h"
#include "eval/evaluate.h"

namespace mgk::cli {

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

std::vector<int> parse_int_list(const std::string& text, const std::string& option) {
  std::vector<int> out;
  for (const auto& item : split_list(text)) {
    size_t used = 0;
    int v = -1;
    try {
      v = std::stoi(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || v < 0)
      throw UsageError(option + " expects a comma-separated list of GPU indices like 0,1 (got '" + text + "')");
    out.push_back(v);
  }
  return out;
}

void add_group_options(CLI::App* c, int* world, bool* world_given, std::string* gpus) {
  c->add_option("--world", *world, "Number of ranks (one GPU each)")
      ->capture_default_str()
      ->each([world_given](const std::string&) { *world_given = true; });
  c->add_option("--gpus", *gpus, "GPU indices to use, e.g. 0,1 (default: the first --world visible ones)");
}

int world_from(int world, bool world_given, const std::vector<int>& gpus) {
  return world_given || gpus.empty() ? world : int(gpus.size());
}

void require_own_gpus(const std::vector<int>& gpus, const std::string& command) {
  if (eval::ranks_share_gpu(gpus))
    throw UsageError("mgk " + command + " times kernels, so it needs each rank on its own GPU; --gpus names one " +
                     "twice (ranks sharing a GPU can only be checked for correctness: mgk eval --gpus ...)");
}

store::Store open_store(const Globals& g) {
  return store::Store::open(database_path(g.db.empty() ? std::nullopt : std::optional<std::string>(g.db)));
}

store::MachineKey machine_key(const eval::MachineInfo& m) {
  return {m.gpu_model(), int(m.gpus.size()), std::to_string(m.driver_version)};
}

std::optional<eval::Peaks> stored_peaks(const Globals& g, const eval::MachineInfo& m) {
  if (m.gpus.empty()) return std::nullopt;
  auto c = open_store(g).latest_calibration(machine_key(m));
  if (!c) return std::nullopt;
  return eval::Peaks::from_calibration(*c);
}

}  // namespace mgk::cli
