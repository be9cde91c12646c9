// Store: merging a shard file into this one, with the shard attached to the connection so
// that rows are copied by SQL; only the attempts' new ids are collected one by one.
#include <sqlite3.h>

#include "common/error.h"
#include "store/statement.h"
#include "store/store.h"
#include "store/transaction.h"

namespace mgk::store {
namespace {

int count(Database& db, const std::string& table) {
  Statement s(db, "SELECT COUNT(*) FROM " + table);
  s.step();
  return int(s.int64(0));
}

// Detaches the shard whatever happens, so the connection stays usable.
struct Attached {
  Database& db;
  Attached(Database& d, const std::filesystem::path& shard) : db(d) {
    Statement s(db, "ATTACH DATABASE ? AS shard");
    s.bind(1, shard.string());
    s.run();
  }
  ~Attached() { sqlite3_exec(db.handle(), "DETACH DATABASE shard", nullptr, nullptr, nullptr); }
};

}  // namespace

MergeReport Store::merge_from(const std::filesystem::path& shard) {
  if (!std::filesystem::exists(shard))
    throw UsageError("cannot merge " + shard.string() + ": no such file");
  if (std::filesystem::equivalent(shard, path()))
    throw UsageError("cannot merge " + shard.string() + " into itself");
  // Refuses a shard from a newer mgk and brings an older one to this schema.
  Store::open_existing(shard);

  std::lock_guard lock(*mutex_);
  return with_context("while merging " + shard.string() + " into " + path().string(), [&] {
    Attached attached(db_, shard);
    Transaction tx(db_);
    MergeReport r;
    db_.exec(
        "CREATE TEMP TABLE merge_new_runs (old_id INTEGER PRIMARY KEY);"
        "CREATE TEMP TABLE merge_run_map (old_id INTEGER PRIMARY KEY, new_id INTEGER NOT NULL);"
        "CREATE TEMP TABLE merge_attempt_map (old_id INTEGER PRIMARY KEY, new_id INTEGER NOT "
        "NULL);");

    int kernels_before = count(db_, "main.kernels");
    db_.exec(
        "INSERT INTO main.kernels (hash, source, first_seen) "
        "SELECT hash, source, first_seen FROM shard.kernels WHERE true "
        "ON CONFLICT (hash) DO UPDATE SET first_seen = MIN(first_seen, excluded.first_seen)");
    r.kernels_added = count(db_, "main.kernels") - kernels_before;

    // Runs are identified by uuid, so a shard merged twice adds nothing the second time.
    db_.exec(
        "INSERT INTO merge_new_runs SELECT id FROM shard.runs "
        "WHERE uuid NOT IN (SELECT uuid FROM main.runs)");
    r.runs = count(db_, "merge_new_runs");
    r.runs_already_present = count(db_, "shard.runs") - r.runs;
    db_.exec(
        "INSERT INTO main.runs (uuid, kind, model, args, status, host, pid, created_at, "
        "ended_at, summary, tokens_in, tokens_out, tokens_cached, tokens_reasoning, cost_usd) "
        "SELECT uuid, kind, model, args, status, host, pid, created_at, ended_at, summary, "
        "tokens_in, tokens_out, tokens_cached, tokens_reasoning, cost_usd FROM shard.runs "
        "WHERE id IN (SELECT old_id FROM merge_new_runs) ORDER BY id;"
        "INSERT INTO merge_run_map SELECT s.id, m.id FROM shard.runs s "
        "JOIN main.runs m ON m.uuid = s.uuid WHERE s.id IN (SELECT old_id FROM merge_new_runs);");

    std::vector<int64_t> attempts;
    {
      Statement s(db_,
                  "SELECT a.id FROM shard.attempts a JOIN merge_run_map m "
                  "ON m.old_id = a.run_id ORDER BY a.id");
      while (s.step()) attempts.push_back(s.int64(0));
    }
    Statement copy_attempt(
        db_,
        "INSERT INTO main.attempts (run_id, problem, model, mode, prompt_version, sample, "
        "world_size, config, status, exit_reason, best_kernel_hash, started_at, ended_at, "
        "tokens_in, tokens_out, tokens_cached, tokens_reasoning, cost_usd) "
        "SELECT m.new_id, problem, model, mode, prompt_version, sample, world_size, config, "
        "status, exit_reason, best_kernel_hash, started_at, ended_at, tokens_in, tokens_out, "
        "tokens_cached, tokens_reasoning, cost_usd FROM shard.attempts a "
        "JOIN merge_run_map m ON m.old_id = a.run_id WHERE a.id = ?");
    Statement map_attempt(db_, "INSERT INTO merge_attempt_map VALUES (?, ?)");
    for (int64_t old_id : attempts) {
      copy_attempt.bind(1, old_id);
      copy_attempt.run();
      copy_attempt.reset();
      map_attempt.bind(1, old_id).bind(2, db_.last_insert_rowid());
      map_attempt.run();
      map_attempt.reset();
    }
    r.attempts = int(attempts.size());

    db_.exec(
        "INSERT INTO main.turns (attempt_id, turn_index, messages, reply, tokens_in, tokens_out, "
        "tokens_cached, tokens_reasoning, cost_usd, latency_s, finish_reason, action, "
        "kernel_hash, feedback, created_at) "
        "SELECT m.new_id, turn_index, messages, reply, tokens_in, tokens_out, tokens_cached, "
        "tokens_reasoning, cost_usd, latency_s, finish_reason, action, kernel_hash, feedback, "
        "created_at FROM shard.turns t JOIN merge_attempt_map m ON m.old_id = t.attempt_id "
        "ORDER BY t.attempt_id, t.turn_index");
    r.turns = db_.changes();

    // Evaluations of copied runs and attempts, and those of no run (`mgk eval` by hand)
    // unless an identical one is here already.
    db_.exec(
        "INSERT INTO main.evaluations (run_id, attempt_id, turn_index, kernel_hash, problem, "
        "world_size, gpus, verdict, message, speedup_min, speedup_median, speedup_max, result, "
        "created_at) "
        "SELECT rm.new_id, am.new_id, e.turn_index, e.kernel_hash, e.problem, e.world_size, "
        "e.gpus, e.verdict, e.message, e.speedup_min, e.speedup_median, e.speedup_max, "
        "e.result, e.created_at FROM shard.evaluations e "
        "LEFT JOIN merge_run_map rm ON rm.old_id = e.run_id "
        "LEFT JOIN merge_attempt_map am ON am.old_id = e.attempt_id "
        "WHERE rm.new_id IS NOT NULL OR am.new_id IS NOT NULL "
        "OR (e.run_id IS NULL AND e.attempt_id IS NULL AND NOT EXISTS ("
        "  SELECT 1 FROM main.evaluations x WHERE x.run_id IS NULL AND x.attempt_id IS NULL "
        "  AND x.created_at = e.created_at AND x.kernel_hash = e.kernel_hash "
        "  AND x.result = e.result)) "
        "ORDER BY e.id");
    r.evaluations = db_.changes();

    db_.exec(
        "INSERT INTO main.tuning_trials (kernel_hash, problem, size, world_size, gpu_model, "
        "driver, params, status, time_us, message, created_at) "
        "SELECT kernel_hash, problem, size, world_size, gpu_model, driver, params, status, "
        "time_us, message, created_at FROM shard.tuning_trials WHERE true "
        "ON CONFLICT (kernel_hash, problem, size, world_size, gpu_model, driver, params) "
        "DO UPDATE SET status = excluded.status, time_us = excluded.time_us, "
        "message = excluded.message, created_at = excluded.created_at "
        "WHERE excluded.created_at > tuning_trials.created_at");
    r.tuning_trials = db_.changes();

    db_.exec(
        "INSERT INTO main.calibrations (gpu_model, gpu_count, driver, created_at, result) "
        "SELECT gpu_model, gpu_count, driver, created_at, result FROM shard.calibrations c "
        "WHERE NOT EXISTS (SELECT 1 FROM main.calibrations x WHERE x.gpu_model = c.gpu_model "
        "AND x.gpu_count = c.gpu_count AND x.driver = c.driver AND x.created_at = c.created_at "
        "AND x.result = c.result) ORDER BY c.id");
    r.calibrations = db_.changes();

    db_.exec("DROP TABLE merge_new_runs; DROP TABLE merge_run_map; DROP TABLE merge_attempt_map;");
    tx.commit();
    return r;
  });
}

}  // namespace mgk::store
