// mgk merge SHARD.db... --into DB: gather the stores written by the tasks of a job array.
#include <algorithm>
#include <filesystem>
#include <map>
#include <iostream>

#include "cli/commands.h"
#include "common/error.h"
#include "store/store.h"

namespace mgk::cli {

namespace {

struct MergeArgs {
  std::vector<std::string> shards;
  std::string into;
};

std::string count(int n, const char* noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

// The runs of a store by uuid (a run keeps its uuid through merges; its id is the store's).
std::map<std::string, int64_t> run_ids(store::Store& s) {
  std::map<std::string, int64_t> ids;
  for (const char* kind : {"generate", "bench", "eval", "tune"})
    for (const store::RunRecord& r : s.runs_of_kind(kind)) ids[r.uuid] = r.id;
  return ids;
}

// "runs renumbered: 1 -> 4, 2 -> 5": the ids the shard's runs have here, where they differ
// (what 'mgk report' and 'mgk show --run' now take).
std::string renumbered(const std::map<std::string, int64_t>& in_shard, const std::map<std::string, int64_t>& here) {
  std::vector<std::pair<int64_t, int64_t>> moved;
  for (const auto& [uuid, id] : in_shard)
    if (auto it = here.find(uuid); it != here.end() && it->second != id) moved.emplace_back(id, it->second);
  std::sort(moved.begin(), moved.end());
  std::string out;
  for (const auto& [from, to] : moved)
    out += (out.empty() ? "" : ", ") + std::to_string(from) + " -> " + std::to_string(to);
  return out;
}

void merge_into(const MergeArgs& a) {
  store::Store target = store::Store::open(a.into);
  for (const auto& shard : a.shards) {
    std::map<std::string, int64_t> shard_ids;
    {
      store::Store read = store::Store::open_read_only(shard);
      shard_ids = run_ids(read);
    }
    store::MergeReport r = target.merge_from(shard);
    std::cout << "merged " << shard << ": " << count(r.runs, "run") << ", "
              << count(r.attempts, "attempt") << ", " << count(r.turns, "turn") << ", "
              << count(r.evaluations, "evaluation") << ", " << count(r.kernels_added, "new kernel")
              << ", " << count(r.tuning_trials, "tuning trial") << ", "
              << count(r.calibrations, "calibration");
    if (r.runs_already_present > 0)
      std::cout << " (" << count(r.runs_already_present, "run") << " already in " << a.into
                << (r.runs_updated + r.attempts_updated > 0
                        ? "; " + count(r.runs_updated, "run") + " and " +
                              count(r.attempts_updated, "attempt") + " ended since"
                        : std::string())
                << ")";
    std::cout << "\n";
    const std::string moved = renumbered(shard_ids, run_ids(target));
    std::cout << "  run ids: "
              << (moved.empty() ? "kept (the same here as in " + shard + ")" : moved + " (" + shard + " -> " + a.into + ")")
              << "\n";
  }
}

// Every shard must be there before anything is written; a merge that fails leaves no
// --into it created (an empty store would pass for a merged one).
void run_merge(const MergeArgs& a) {
  for (const auto& shard : a.shards)
    if (!std::filesystem::is_regular_file(shard))
      throw NotFoundError("no store file " + shard + " to merge (a Slurm run's shards are its task-K.db files)");
  const bool existed = std::filesystem::exists(a.into);
  try {
    merge_into(a);
  } catch (const Error&) {
    if (!existed) {
      std::error_code ec;
      for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(a.into + suffix, ec);
    }
    throw;
  }
}

}  // namespace

void add_merge_command(CLI::App& root, Globals& g) {
  auto a = std::make_shared<MergeArgs>();
  CLI::App* c = root.add_subcommand(
      "merge", "Merge stores written by separate jobs (e.g. a Slurm array) into one");
  c->add_option("shards", a->shards, "The store files to merge")->required();
  c->add_option("--into", a->into, "The store to merge into (created if missing)")->required();
  c->callback([a, &g] {
    run_merge(*a);
    g.exit_code = ExitCode::kOk;
  });
}

}  // namespace mgk::cli
