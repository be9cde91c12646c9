// Store: merging a shard file into this one. The shard is opened read-only, checked, and
// attached to this connection so that rows are copied by SQL; rows already here are found
// by identity (see store.h), never by id, since every file numbers its rows from 1.
#include <sqlite3.h>
#include <unistd.h>

#include "common/error.h"
#include "store/migrations.h"
#include "store/statement.h"
#include "store/store.h"
#include "store/transaction.h"

namespace mgk::store {
namespace {

// The shard as this connection can attach it: the file itself, read-only, or a migrated
// copy of it (removed with this object) when it has an older schema.
class ReadableShard {
 public:
  ReadableShard(const std::filesystem::path& shard, const std::filesystem::path& target) {
    Database db = Database::open(shard, Database::Mode::kReadOnly);
    const int version = checked_schema_version(db);
    // A shard damaged in transit must be blamed on itself, before anything is copied.
    std::string check = db.pragma("quick_check");
    if (check != "ok")
      throw Error("cannot merge " + shard.string() + ": the file is damaged (SQLite quick_check: " +
                  check + "); nothing was merged");
    if (version == int(schema_migrations().size())) {
      uri_ = db.uri();
      return;
    }
    copy_ = target.string() + ".merge-" + std::to_string(getpid()) + ".tmp";
    std::filesystem::remove(copy_);
    Database copy = Database::open(copy_, Database::Mode::kCreate);
    sqlite3_backup* b = sqlite3_backup_init(copy.handle(), "main", db.handle(), "main");
    if (b == nullptr) copy.fail(sqlite3_errcode(copy.handle()), "copying " + shard.string());
    int rc = sqlite3_backup_step(b, -1);
    sqlite3_backup_finish(b);
    if (rc != SQLITE_DONE) copy.fail(rc, "copying " + shard.string() + " to migrate the copy");
    migrate(copy);
    uri_ = copy_.string();
  }
  ~ReadableShard() {
    if (copy_.empty()) return;
    std::error_code ignored;
    for (const char* suffix : {"", "-wal", "-shm"})
      std::filesystem::remove(copy_.string() + suffix, ignored);
  }
  ReadableShard(const ReadableShard&) = delete;
  ReadableShard& operator=(const ReadableShard&) = delete;

  const std::string& uri() const { return uri_; }

 private:
  std::string uri_;
  std::filesystem::path copy_;
};

int count(Database& db, const std::string& table) {
  Statement s(db, "SELECT COUNT(*) FROM " + table);
  s.step();
  return int(s.int64(0));
}

int run_counting(Database& db, const char* sql) {
  db.exec(sql);
  return db.changes();
}

// Detaches the shard whatever happens, so the connection stays usable.
struct Attached {
  Database& db;
  Attached(Database& d, const std::string& uri) : db(d) {
    Statement s(db, "ATTACH DATABASE ? AS shard");
    s.bind(1, uri);
    s.run();
  }
  ~Attached() { sqlite3_exec(db.handle(), "DETACH DATABASE shard", nullptr, nullptr, nullptr); }
};

// An attempt of the shard is the attempt here with the same run (mapped), problem, model,
// mode, sample and start time (milliseconds).
constexpr const char* kSameAttempt =
    "x.run_id = rm.new_id AND x.problem = a.problem AND x.model = a.model AND x.mode = a.mode "
    "AND x.sample = a.sample AND x.started_at = a.started_at";

}  // namespace

MergeReport Store::merge_from(const std::filesystem::path& shard) {
  if (!std::filesystem::exists(shard))
    throw UsageError("cannot merge " + shard.string() + ": no such file");
  if (std::filesystem::equivalent(shard, path()))
    throw UsageError("cannot merge " + shard.string() + " into itself");
  ReadableShard source(shard, path());

  std::lock_guard lock(*mutex_);
  return with_context("while merging " + shard.string() + " into " + path().string(), [&] {
    Attached attached(db_, source.uri());
    Transaction tx(db_);
    MergeReport r;
    db_.exec(
        "CREATE TEMP TABLE merge_run_map (old_id INTEGER PRIMARY KEY, new_id INTEGER NOT NULL);"
        "CREATE TEMP TABLE merge_attempt_map (old_id INTEGER PRIMARY KEY, new_id INTEGER);");

    int kernels_before = count(db_, "main.kernels");
    db_.exec(
        "INSERT INTO main.kernels (hash, source, first_seen) "
        "SELECT hash, source, first_seen FROM shard.kernels WHERE true "
        "ON CONFLICT (hash) DO UPDATE SET first_seen = MIN(first_seen, excluded.first_seen)");
    r.kernels_added = count(db_, "main.kernels") - kernels_before;

    // Runs by uuid. A run here that the shard shows ended later takes the shard's state.
    r.runs = run_counting(
        db_,
        "INSERT INTO main.runs (uuid, kind, model, args, status, host, pid, created_at, "
        "ended_at, summary) "
        "SELECT uuid, kind, model, args, status, host, pid, created_at, ended_at, summary "
        "FROM shard.runs WHERE uuid NOT IN (SELECT uuid FROM main.runs) ORDER BY id");
    r.runs_already_present = count(db_, "shard.runs") - r.runs;
    r.runs_updated = run_counting(
        db_,
        "UPDATE main.runs SET (status, ended_at, summary) = "
        "(SELECT s.status, s.ended_at, s.summary FROM shard.runs s WHERE s.uuid = runs.uuid) "
        "WHERE uuid IN (SELECT s.uuid FROM shard.runs s WHERE s.uuid = runs.uuid "
        "AND s.ended_at IS NOT NULL AND (runs.ended_at IS NULL OR s.ended_at > runs.ended_at))");
    db_.exec(
        "INSERT INTO merge_run_map SELECT s.id, m.id FROM shard.runs s "
        "JOIN main.runs m ON m.uuid = s.uuid");

    // Attempts by identity; their totals are summed from the turns below.
    r.attempts = run_counting(
        db_,
        (std::string("INSERT INTO main.attempts (run_id, problem, model, mode, prompt_version, "
                     "sample, world_size, config, status, exit_reason, best_kernel_hash, "
                     "started_at, ended_at) "
                     "SELECT rm.new_id, a.problem, a.model, a.mode, a.prompt_version, a.sample, "
                     "a.world_size, a.config, a.status, a.exit_reason, a.best_kernel_hash, "
                     "a.started_at, a.ended_at FROM shard.attempts a "
                     "JOIN merge_run_map rm ON rm.old_id = a.run_id "
                     "WHERE NOT EXISTS (SELECT 1 FROM main.attempts x WHERE ") +
         kSameAttempt + ") ORDER BY a.id")
            .c_str());
    db_.exec((std::string("INSERT INTO merge_attempt_map SELECT a.id, "
                          "(SELECT MIN(x.id) FROM main.attempts x WHERE ") +
              kSameAttempt +
              ") FROM shard.attempts a JOIN merge_run_map rm ON rm.old_id = a.run_id")
                 .c_str());
    r.attempts_updated = run_counting(
        db_,
        "UPDATE main.attempts SET (status, exit_reason, best_kernel_hash, ended_at) = "
        "(SELECT a.status, a.exit_reason, a.best_kernel_hash, a.ended_at FROM shard.attempts a "
        " JOIN merge_attempt_map m ON m.old_id = a.id WHERE m.new_id = attempts.id) "
        "WHERE id IN (SELECT m.new_id FROM merge_attempt_map m JOIN shard.attempts a "
        "ON a.id = m.old_id WHERE m.new_id = attempts.id AND a.ended_at IS NOT NULL "
        "AND (attempts.ended_at IS NULL OR a.ended_at > attempts.ended_at))");

    r.turns = run_counting(
        db_,
        "INSERT INTO main.turns (attempt_id, turn_index, messages, reply, tokens_in, tokens_out, "
        "tokens_cached, tokens_reasoning, cost_usd, latency_s, finish_reason, action, "
        "kernel_hash, feedback, created_at) "
        "SELECT m.new_id, turn_index, messages, reply, tokens_in, tokens_out, tokens_cached, "
        "tokens_reasoning, cost_usd, latency_s, finish_reason, action, kernel_hash, feedback, "
        "created_at FROM shard.turns t JOIN merge_attempt_map m ON m.old_id = t.attempt_id "
        "WHERE true ORDER BY t.attempt_id, t.turn_index "
        "ON CONFLICT (attempt_id, turn_index) DO NOTHING");

    // Evaluations of runs and attempts, and those of no run (`mgk eval` by hand, before
    // it began a run per evaluation); `IS` compares the absent ids too.
    r.evaluations = run_counting(
        db_,
        "INSERT INTO main.evaluations (run_id, attempt_id, turn_index, kernel_hash, problem, "
        "world_size, gpus, verdict, message, speedup_min, speedup_median, speedup_max, result, "
        "created_at) "
        "SELECT rm.new_id, am.new_id, e.turn_index, e.kernel_hash, e.problem, e.world_size, "
        "e.gpus, e.verdict, e.message, e.speedup_min, e.speedup_median, e.speedup_max, "
        "e.result, e.created_at FROM shard.evaluations e "
        "LEFT JOIN merge_run_map rm ON rm.old_id = e.run_id "
        "LEFT JOIN merge_attempt_map am ON am.old_id = e.attempt_id "
        "WHERE NOT EXISTS (SELECT 1 FROM main.evaluations x WHERE x.kernel_hash = e.kernel_hash "
        "AND x.created_at = e.created_at AND x.run_id IS rm.new_id "
        "AND x.attempt_id IS am.new_id AND x.turn_index IS e.turn_index) "
        "ORDER BY e.id");

    // The totals equal the sums of the turns (record_turn keeps them so); summing again
    // keeps that true for attempts and runs that gained turns.
    db_.exec(
        "UPDATE main.attempts SET (tokens_in, tokens_out, tokens_cached, tokens_reasoning, "
        "cost_usd) = (SELECT COALESCE(SUM(tokens_in), 0), COALESCE(SUM(tokens_out), 0), "
        "COALESCE(SUM(tokens_cached), 0), COALESCE(SUM(tokens_reasoning), 0), "
        "CASE WHEN COUNT(*) > COUNT(cost_usd) THEN NULL ELSE COALESCE(SUM(cost_usd), 0) END "
        "FROM main.turns t WHERE t.attempt_id = attempts.id) "
        "WHERE id IN (SELECT new_id FROM merge_attempt_map);"
        "UPDATE main.runs SET (tokens_in, tokens_out, tokens_cached, tokens_reasoning, "
        "cost_usd) = (SELECT COALESCE(SUM(tokens_in), 0), COALESCE(SUM(tokens_out), 0), "
        "COALESCE(SUM(tokens_cached), 0), COALESCE(SUM(tokens_reasoning), 0), "
        "CASE WHEN COUNT(*) > COUNT(cost_usd) THEN NULL ELSE COALESCE(SUM(cost_usd), 0) END "
        "FROM main.attempts a WHERE a.run_id = runs.id) "
        "WHERE id IN (SELECT new_id FROM merge_run_map)");

    r.tuning_trials = run_counting(
        db_,
        "INSERT INTO main.tuning_trials (kernel_hash, problem, size, world_size, gpu_model, "
        "driver, params, status, time_us, message, created_at) "
        "SELECT kernel_hash, problem, size, world_size, gpu_model, driver, params, status, "
        "time_us, message, created_at FROM shard.tuning_trials WHERE true "
        "ON CONFLICT (kernel_hash, problem, size, world_size, gpu_model, driver, params) "
        "DO UPDATE SET status = excluded.status, time_us = excluded.time_us, "
        "message = excluded.message, created_at = excluded.created_at "
        "WHERE excluded.created_at > tuning_trials.created_at");

    r.calibrations = run_counting(
        db_,
        "INSERT INTO main.calibrations (gpu_model, gpu_count, driver, created_at, result) "
        "SELECT gpu_model, gpu_count, driver, created_at, result FROM shard.calibrations c "
        "WHERE NOT EXISTS (SELECT 1 FROM main.calibrations x WHERE x.gpu_model = c.gpu_model "
        "AND x.gpu_count = c.gpu_count AND x.driver = c.driver AND x.created_at = c.created_at "
        "AND x.result = c.result) ORDER BY c.id");

    db_.exec("DROP TABLE merge_run_map; DROP TABLE merge_attempt_map;");
    tx.commit();
    return r;
  });
}

}  // namespace mgk::store
