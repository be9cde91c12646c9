// mgk merge SHARD.db... --into DB: gather the stores written by the tasks of a job array.
#include <filesystem>
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

void merge_into(const MergeArgs& a) {
  store::Store target = store::Store::open(a.into);
  for (const auto& shard : a.shards) {
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
