// The mgk store: one SQLite file holding every run, attempt, turn, kernel, evaluation,
// tuning trial and calibration. Every write method commits before it returns (one short
// transaction each), so a crash or Ctrl-C loses nothing that a call finished. A Store is
// safe to share between threads (calls are serialised on one connection); several
// processes may use the same file at once (WAL; writers wait up to a minute for a lock).
// All methods throw mgk::Error on failure; bad names/ids are mgk::UsageError.
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "store/database.h"
#include "store/records.h"
#include "store/tuning_trial.h"

namespace mgk::store {

class Store {
 public:
  // Opens the file, creating it if needed, and migrates it to the current schema.
  // Throws if the file was written by a newer mgk.
  static Store open(const std::filesystem::path& path);
  // The same for a file that must already exist (history, show, merge sources).
  static Store open_existing(const std::filesystem::path& path);

  Store(Store&&) noexcept;
  Store& operator=(Store&&) noexcept;
  ~Store();

  const std::filesystem::path& path() const { return db_.path(); }

  // ---- runs ----
  // Records a run as "running", with this host and pid. Returns its id.
  int64_t begin_run(const RunStart& run);
  // Marks the run finished with `status` and stores its summary (a JSON object).
  void finish_run(int64_t run_id, Status status,
                  const nlohmann::json& summary = nlohmann::json::object());
  std::optional<RunRecord> run(int64_t run_id);
  // Runs of one kind ("bench", ...), newest first (bench_queries.cc).
  std::vector<RunRecord> runs_of_kind(const std::string& kind);
  // Marks a stopped run "running" again, owned by this host and process, for a resumed
  // `mgk bench`; returns it. Unknown id: UsageError.
  RunRecord reopen_run(int64_t run_id);

  // ---- attempts and turns ----
  int64_t begin_attempt(const AttemptStart& attempt);
  // Stores one turn and adds its tokens and cost to the attempt's and the run's totals,
  // atomically. A turn index already stored for the attempt is an error.
  void record_turn(const TurnRecord& turn);
  void finish_attempt(int64_t attempt_id, const AttemptEnd& end);
  // Marks a stored attempt "running" again for `generate --resume`; returns it.
  AttemptSummary reopen_attempt(int64_t attempt_id);

  // ---- kernels ----
  // Stores the source once per distinct text; returns its hash (sha256_hex of the source).
  std::string put_kernel(const std::string& source);
  std::optional<std::string> kernel_source(const std::string& hash);

  // ---- evaluations ----
  // Stores the evaluation (its kernel must have been put); returns its id.
  int64_t record_evaluation(const EvaluationRecord& evaluation);

  // ---- tuning ----
  std::optional<TuningTrial> find_tuning_trial(const TuningKey& key);
  // Inserts the trial, or replaces the outcome of the trial with the same key (the
  // latest measurement of a configuration wins). Status must be one of TuningTrial's.
  void record_tuning_trial(const TuningTrial& trial);
  // Matching trials, best first: "ok" by ascending time_us, then the failures.
  std::vector<TuningTrial> tuning_trials(const TuningTrialFilter& filter = {});

  // ---- calibrations ----
  void record_calibration(const MachineKey& machine, const nlohmann::json& result);
  // The most recent calibration of exactly this machine (model, GPU count, driver).
  std::optional<nlohmann::json> latest_calibration(const MachineKey& machine);

  // ---- queries ----
  // Attempts matching the filter, newest first.
  std::vector<AttemptSummary> history(const HistoryFilter& filter);
  std::optional<AttemptSummary> attempt(int64_t attempt_id);
  std::vector<AttemptSummary> attempts_of_run(int64_t run_id);  // oldest first
  // The run's attempts left "running" or "interrupted", oldest first: what a resumed run
  // must continue. (Only call it for a run no live process is working on.)
  std::vector<AttemptSummary> attempts_to_resume(int64_t run_id);
  std::vector<TurnRecord> turns(int64_t attempt_id);                         // by index
  std::vector<EvaluationRecord> evaluations_of_attempt(int64_t attempt_id);  // oldest first
  // The attempt with its turns, evaluations and best kernel; nullopt for an unknown id.
  std::optional<AttemptDetail> attempt_detail(int64_t attempt_id);

  // ---- merging shards (Slurm array tasks each write their own file) ----
  // Copies into this store, in one transaction, every run of the shard with everything
  // under it (attempts, turns, evaluations) under new ids, the kernels they use (stored
  // once), evaluations that belong to no run, tuning trials (the newer of two trials with
  // one key wins) and calibrations. Runs already here (same uuid) are skipped, so merging a
  // shard twice adds nothing. The shard is migrated to the current schema first.
  MergeReport merge_from(const std::filesystem::path& shard);

 private:
  explicit Store(Database db);
  Database db_;
  std::unique_ptr<std::mutex> mutex_;  // a pointer so that Store can move
};

}  // namespace mgk::store
