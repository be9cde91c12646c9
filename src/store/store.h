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
#include <utility>
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
  // For commands that only read (history, show, the --show options): the file must exist
  // (else mgk::NotFoundError) and nothing is written to it, so a store the user may only
  // read can be read. A file at an older schema is migrated first when it is writable;
  // otherwise that is an error saying so. Write methods then throw.
  static Store open_read_only(const std::filesystem::path& path);

  Store(Store&&) noexcept;
  Store& operator=(Store&&) noexcept;
  ~Store();

  const std::filesystem::path& path() const { return db_.path(); }

  // ---- runs ----
  // Records a run as "running", with this host and pid. Returns its id. `uuid`: empty for a
  // new one; a Slurm array task gives its run's, so that its shard merges into that run.
  int64_t begin_run(const RunStart& run, const std::string& uuid = "");
  // Replaces the run's args (a Slurm run adds the jobs it submitted). Unknown id: NotFoundError.
  void set_run_args(int64_t run_id, const nlohmann::json& args);
  // Marks the run finished with `status` and stores its summary (a JSON object).
  void finish_run(int64_t run_id, Status status,
                  const nlohmann::json& summary = nlohmann::json::object());
  std::optional<RunRecord> run(int64_t run_id);
  // Runs of one kind ("bench", ...), newest first (bench_queries.cc).
  std::vector<RunRecord> runs_of_kind(const std::string& kind);
  // The run of that kind named `name` (RunRecord::name), if any (bench_queries.cc).
  std::optional<RunRecord> run_named(const std::string& kind, const std::string& name);
  // Marks a stopped run "running" again, owned by this host and process, for a resumed
  // `mgk bench`; returns it. Unknown id: UsageError.
  RunRecord reopen_run(int64_t run_id);

  // ---- attempts and turns ----
  int64_t begin_attempt(const AttemptStart& attempt);
  // Stores one turn and adds its tokens and cost to the attempt's and the run's totals,
  // atomically. A turn index already stored for the attempt is an error.
  void record_turn(const TurnRecord& turn);
  // A turn stored with action kTurnPending (its reply paid for, not yet acted on) gets what
  // was done with it: its action, kernel and feedback. Any other turn: an Error.
  void complete_turn(int64_t attempt_id, int index, const std::string& action,
                     const std::optional<std::string>& kernel_hash, const std::string& feedback);
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
  // The most recent calibration of every machine in the store, newest first.
  std::vector<std::pair<MachineKey, nlohmann::json>> latest_calibrations();

  // ---- queries ----
  // Attempts matching the filter, newest first.
  std::vector<AttemptSummary> history(const HistoryFilter& filter);
  // Runs that have no attempts (`mgk eval`, `mgk tune`) matching the filter, newest
  // first; `problem` matches the run's args.problem, the times its created_at.
  std::vector<RunRecord> runs_without_attempts(const HistoryFilter& filter);
  std::vector<EvaluationRecord> evaluations_of_run(int64_t run_id);  // oldest first
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
  // Copies into this store, in one transaction, what the shard has and this store lacks:
  // runs, attempts, turns and evaluations under new ids, the kernels they use (stored
  // once), tuning trials (the newer of two trials with one key wins) and calibrations.
  // Rows are matched by identity, not by id: a run by its uuid, an attempt by its run,
  // problem, model, mode, sample and start time, a turn by its attempt and index, an
  // evaluation by its run, attempt, turn, kernel and time. So merging a shard again adds
  // nothing, and merging it after it grew adds what is new: turns and evaluations, and the
  // state of a run or attempt that ended since (status, end time, summary, best kernel),
  // with the token and cost totals summed again from the turns. Nothing is written to the
  // shard: it is checked (a damaged shard is named as such) and read; a shard at an older
  // schema is migrated in a temporary copy beside this store.
  MergeReport merge_from(const std::filesystem::path& shard);

 private:
  explicit Store(Database db);
  Database db_;
  std::unique_ptr<std::mutex> mutex_;  // a pointer so that Store can move
};

}  // namespace mgk::store
