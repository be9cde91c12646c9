#include "cli/options.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "common/env.h"
#include "common/error.h"
#include "eval/calibration.h"
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

namespace {

CLI::Validator number_check(double min, bool inclusive) {
  char bound[32];
  std::snprintf(bound, sizeof bound, "%g", min);
  const std::string want = std::string("must be a number ") + (inclusive ? "of at least " : "above ") + bound;
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        char* end = nullptr;
        errno = 0;
        const double v = std::strtod(text.c_str(), &end);
        const bool number = !text.empty() && end == text.c_str() + text.size() && errno == 0;
        if (number && std::isfinite(v) && (inclusive ? v >= min : v > min)) return "";
        return want + ", not '" + text + "'";
      },
      inclusive ? std::string(">=") + bound : std::string(">") + bound);
}

}  // namespace

CLI::Validator above(double min) { return number_check(min, false); }
CLI::Validator at_least(double min) { return number_check(min, true); }

void add_group_options(CLI::App* c, int* world, bool* world_given, std::string* gpus) {
  c->add_option("--world", *world, "Number of ranks (one GPU each)")
      ->capture_default_str()
      ->check(at_least(1))
      ->each([world_given](const std::string&) { *world_given = true; });
  c->add_option("--gpus", *gpus, "GPU indices to use, e.g. 0,1 (default: the first --world visible ones)");
}

int world_from(int world, bool world_given, const std::vector<int>& gpus) {
  if (gpus.empty()) return world;
  if (world_given && world != int(gpus.size()))
    throw UsageError("--world " + std::to_string(world) + " does not match --gpus, which names " +
                     std::to_string(gpus.size()) + " GPU(s), one per rank: give one of the two, " +
                     "or name a GPU twice to let ranks share it (--gpus 0,0,...)");
  return int(gpus.size());
}

void require_own_gpus(const std::vector<int>& gpus, const std::string& command) {
  if (eval::ranks_share_gpu(gpus))
    throw UsageError("mgk " + command + " times kernels, so it needs each rank on its own GPU; --gpus names one " +
                     "twice (ranks sharing a GPU can only be checked for correctness: mgk eval --gpus ...)");
}

namespace {
std::optional<std::string> db_option(const Globals& g) {
  return g.db.empty() ? std::nullopt : std::optional<std::string>(g.db);
}
}  // namespace

store::Store open_store(const Globals& g) {
  const std::filesystem::path path = database_path(db_option(g));
  if (database_path_is_default(db_option(g))) {
    std::error_code ec;  // a failure shows as the store's own "cannot create" error
    std::filesystem::create_directories(path.parent_path(), ec);
  }
  return store::Store::open(path);
}

store::Store open_store_to_read(const Globals& g) {
  return store::Store::open_read_only(database_path(db_option(g)));
}

std::optional<eval::Peaks> stored_peaks(const Globals& g, const eval::MachineInfo& m) {
  store::Store store = open_store(g);
  return eval::calibrated_peaks(store, m);
}

}  // namespace mgk::cli
