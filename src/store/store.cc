// Store: opening, and every write. Queries are in store_queries.cc, merging in
// store_merge.cc.
#include "store/store.h"

#include <unistd.h>

#include <random>

#include "common/error.h"
#include "store/migrations.h"
#include "store/rows.h"
#include "common/hash.h"
#include "store/statement.h"
#include "store/timestamp.h"
#include "store/transaction.h"

namespace mgk::store {
namespace {

std::string random_uuid() {
  std::random_device rd;
  std::uniform_int_distribution<uint64_t> dist;
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", (unsigned long long)dist(rd),
                (unsigned long long)dist(rd));
  return buf;
}

void check_one_of(const std::string& what, const std::string& value,
                  std::initializer_list<const char*> valid) {
  std::string list;
  for (const char* v : valid) {
    if (value == v) return;
    list += (list.empty() ? "" : ", ") + std::string(v);
  }
  throw UsageError("unknown " + what + " '" + value + "' (valid: " + list + ")");
}

}  // namespace

Store::Store(Database db) : db_(std::move(db)), mutex_(std::make_unique<std::mutex>()) {}
Store::Store(Store&&) noexcept = default;
Store& Store::operator=(Store&&) noexcept = default;
Store::~Store() = default;

Store Store::open(const std::filesystem::path& path) {
  Database db = Database::open(path, Database::Mode::kCreate);
  migrate(db);
  return Store(std::move(db));
}

Store Store::open_read_only(const std::filesystem::path& path) {
  Database db = Database::open(path, Database::Mode::kReadOnly);
  const int version = checked_schema_version(db);
  if (version == int(schema_migrations().size())) return Store(std::move(db));
  if (access(path.c_str(), W_OK) != 0)
    throw Error("the mgk store " + path.string() + " has schema version " +
                std::to_string(version) + ", older than this mgk's " +
                std::to_string(schema_migrations().size()) +
                ", and reading it needs migrating it, which this user cannot (the file is " +
                "read-only): copy it somewhere writable and pass that copy with --db");
  db = Database::open(path, Database::Mode::kCreate);
  migrate(db);
  return Store(std::move(db));
}

int64_t Store::begin_run(const RunStart& run, const std::string& uuid) {
  check_run_kind(run.kind);
  std::lock_guard lock(*mutex_);
  Statement s(db_,
              "INSERT INTO runs (uuid, kind, model, args, status, host, pid, created_at) "
              "VALUES (?, ?, ?, ?, 'running', ?, ?, ?)");
  s.bind(1, uuid.empty() ? random_uuid() : uuid).bind(2, run.kind).bind(3, run.model).bind(4, run.args.dump());
  s.bind(5, rows::host_name()).bind(6, int64_t(getpid())).bind(7, utc_now());
  s.run();
  return db_.last_insert_rowid();
}

void Store::set_run_args(int64_t run_id, const nlohmann::json& args) {
  std::lock_guard lock(*mutex_);
  Statement s(db_, "UPDATE runs SET args = ? WHERE id = ?");
  s.bind(1, args.dump()).bind(2, run_id);
  s.run();
  if (db_.changes() == 0) throw NotFoundError("no run " + std::to_string(run_id) + " in " + path().string());
}

void Store::finish_run(int64_t run_id, Status status, const nlohmann::json& summary) {
  std::lock_guard lock(*mutex_);
  Statement s(db_, "UPDATE runs SET status = ?, summary = ?, ended_at = ? WHERE id = ?");
  s.bind(1, to_string(status)).bind(2, summary.dump()).bind(3, utc_now()).bind(4, run_id);
  s.run();
  if (db_.changes() == 0)
    throw UsageError("no run " + std::to_string(run_id) + " in " + path().string());
}

int64_t Store::begin_attempt(const AttemptStart& a) {
  check_one_of("attempt mode", a.mode, {"refine", "shell"});
  std::lock_guard lock(*mutex_);
  Statement s(db_,
              "INSERT INTO attempts (run_id, problem, model, mode, prompt_version, sample, "
              "world_size, config, status, started_at) "
              "SELECT ?, ?, ?, ?, ?, ?, ?, ?, 'running', ? WHERE EXISTS "
              "(SELECT 1 FROM runs WHERE id = ?1)");
  s.bind(1, a.run_id).bind(2, a.problem).bind(3, a.model).bind(4, a.mode);
  s.bind(5, a.prompt_version).bind(6, a.sample).bind(7, a.world_size);
  s.bind(8, a.config.dump()).bind(9, utc_now());
  s.run();
  if (db_.changes() == 0)
    throw UsageError("cannot start an attempt in run " + std::to_string(a.run_id) +
                     ": no such run in " + path().string());
  return db_.last_insert_rowid();
}

void Store::record_turn(const TurnRecord& t) {
  std::lock_guard lock(*mutex_);
  const std::string which =
      "turn " + std::to_string(t.index) + " of attempt " + std::to_string(t.attempt_id);
  Transaction tx(db_);
  {
    Statement exists(db_, "SELECT 1 FROM turns WHERE attempt_id = ? AND turn_index = ?");
    exists.bind(1, t.attempt_id).bind(2, t.index);
    if (exists.step()) throw Error(which + " is already stored in " + path().string());
  }
  {
    // The totals move with the turn in one transaction, so they always equal the sums.
    Statement totals(
        db_,
        "UPDATE attempts SET tokens_in = tokens_in + ?1, tokens_out = tokens_out + ?2, "
        "tokens_cached = tokens_cached + ?3, tokens_reasoning = tokens_reasoning + ?4, "
        "cost_usd = cost_usd + ?5 WHERE id = ?6");
    totals.bind(1, t.tokens_in).bind(2, t.tokens_out).bind(3, t.tokens_cached);
    totals.bind(4, t.tokens_reasoning).bind(5, t.cost_usd).bind(6, t.attempt_id);
    totals.run();
    if (db_.changes() == 0) throw UsageError("cannot record " + which + ": no such attempt");
  }
  {
    Statement totals(
        db_,
        "UPDATE runs SET tokens_in = tokens_in + ?1, tokens_out = tokens_out + ?2, "
        "tokens_cached = tokens_cached + ?3, tokens_reasoning = tokens_reasoning + ?4, "
        "cost_usd = cost_usd + ?5 "
        "WHERE id = (SELECT run_id FROM attempts WHERE id = ?6)");
    totals.bind(1, t.tokens_in).bind(2, t.tokens_out).bind(3, t.tokens_cached);
    totals.bind(4, t.tokens_reasoning).bind(5, t.cost_usd).bind(6, t.attempt_id);
    totals.run();
  }
  with_context("while recording " + which + " (its kernel must be stored with put_kernel first)",
               [&] {
                 Statement s(db_, std::string("INSERT INTO turns (") + rows::kTurnColumns +
                                      ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
                 s.bind(1, t.attempt_id).bind(2, t.index).bind(3, t.messages.dump());
                 s.bind(4, t.reply).bind(5, t.tokens_in).bind(6, t.tokens_out);
                 s.bind(7, t.tokens_cached).bind(8, t.tokens_reasoning).bind(9, t.cost_usd);
                 s.bind(10, t.latency_s).bind(11, t.finish_reason).bind(12, t.action);
                 s.bind(13, t.kernel_hash).bind(14, t.feedback).bind(15, utc_now());
                 s.run();
               });
  tx.commit();
}

void Store::complete_turn(int64_t attempt_id, int index, const std::string& action,
                          const std::optional<std::string>& kernel_hash, const std::string& feedback) {
  std::lock_guard lock(*mutex_);
  const std::string which = "turn " + std::to_string(index) + " of attempt " + std::to_string(attempt_id);
  with_context("while completing " + which, [&] {
    Statement s(db_, "UPDATE turns SET action = ?, kernel_hash = ?, feedback = ? "
                     "WHERE attempt_id = ? AND turn_index = ? AND action = ?");
    s.bind(1, action).bind(2, kernel_hash).bind(3, feedback).bind(4, attempt_id).bind(5, index).bind(6, kTurnPending);
    s.run();
  });
  if (db_.changes() == 0) throw Error(which + " is not a pending turn in " + path().string());
}

void Store::finish_attempt(int64_t attempt_id, const AttemptEnd& end) {
  std::lock_guard lock(*mutex_);
  with_context("while finishing attempt " + std::to_string(attempt_id), [&] {
    Statement s(db_,
                "UPDATE attempts SET status = ?, exit_reason = ?, best_kernel_hash = ?, "
                "ended_at = ? WHERE id = ?");
    s.bind(1, to_string(end.status)).bind(2, end.exit_reason).bind(3, end.best_kernel_hash);
    s.bind(4, utc_now()).bind(5, attempt_id);
    s.run();
  });
  if (db_.changes() == 0)
    throw UsageError("no attempt " + std::to_string(attempt_id) + " in " + path().string());
}

AttemptSummary Store::reopen_attempt(int64_t attempt_id) {
  {
    std::lock_guard lock(*mutex_);
    Statement s(db_, "UPDATE attempts SET status = 'running', ended_at = NULL WHERE id = ?");
    s.bind(1, attempt_id);
    s.run();
    if (db_.changes() == 0)
      throw UsageError("cannot resume attempt " + std::to_string(attempt_id) +
                       ": no such attempt in " + path().string() + " (mgk history lists them)");
  }
  return *attempt(attempt_id);
}

std::string Store::put_kernel(const std::string& source) {
  std::string hash = sha256_hex(source);
  std::lock_guard lock(*mutex_);
  Statement s(db_,
              "INSERT INTO kernels (hash, source, first_seen) VALUES (?, ?, ?) "
              "ON CONFLICT (hash) DO NOTHING");
  s.bind(1, hash).bind(2, source).bind(3, utc_now());
  s.run();
  return hash;
}

int64_t Store::record_evaluation(const EvaluationRecord& e) {
  std::lock_guard lock(*mutex_);
  return with_context(
      "while recording an evaluation of kernel " + e.kernel_hash.substr(0, 12) +
          " (the kernel must be stored with put_kernel first)",
      [&] {
        Statement s(db_,
                    "INSERT INTO evaluations (run_id, attempt_id, turn_index, kernel_hash, "
                    "problem, world_size, gpus, verdict, message, speedup_min, speedup_median, "
                    "speedup_max, result, created_at) VALUES ("
                    "COALESCE(?1, (SELECT run_id FROM attempts WHERE id = ?2)), "
                    "?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)");
        s.bind(1, e.run_id).bind(2, e.attempt_id).bind(3, e.turn_index).bind(4, e.kernel_hash);
        s.bind(5, e.problem).bind(6, e.world_size).bind(7, nlohmann::json(e.gpus).dump());
        s.bind(8, e.verdict).bind(9, e.message).bind(10, e.speedup_min);
        s.bind(11, e.speedup_median).bind(12, e.speedup_max).bind(13, e.result.to_json().dump());
        s.bind(14, utc_now());
        s.run();
        return db_.last_insert_rowid();
      });
}

std::optional<TuningTrial> Store::find_tuning_trial(const TuningKey& k) {
  std::lock_guard lock(*mutex_);
  Statement s(db_, std::string("SELECT ") + rows::kTuningColumns +
                       " FROM tuning_trials WHERE kernel_hash = ? AND problem = ? AND size = ? "
                       "AND world_size = ? AND gpu_model = ? AND driver = ? AND params = ?");
  s.bind(1, k.kernel_hash).bind(2, k.problem).bind(3, k.size).bind(4, k.world_size);
  s.bind(5, k.gpu_model).bind(6, k.driver).bind(7, canonical_params(k.params));
  if (!s.step()) return std::nullopt;
  return rows::read_tuning_trial(s);
}

void Store::record_tuning_trial(const TuningTrial& t) {
  if (!is_tuning_status(t.status))
    throw UsageError("unknown tuning trial status '" + t.status +
                     "' (valid: ok, compile, launch, incorrect, hang, error)");
  std::lock_guard lock(*mutex_);
  Statement s(db_,
              "INSERT INTO tuning_trials (kernel_hash, problem, size, world_size, gpu_model, "
              "driver, params, status, time_us, message, created_at) "
              "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
              "ON CONFLICT (kernel_hash, problem, size, world_size, gpu_model, driver, params) "
              "DO UPDATE SET status = excluded.status, time_us = excluded.time_us, "
              "message = excluded.message, created_at = excluded.created_at");
  s.bind(1, t.kernel_hash).bind(2, t.problem).bind(3, t.size).bind(4, t.world_size);
  s.bind(5, t.gpu_model).bind(6, t.driver).bind(7, canonical_params(t.params));
  s.bind(8, t.status)
      .bind(9, t.status == "ok" ? std::optional(t.time_us) : std::nullopt)
      .bind(10, t.message)
      .bind(11, utc_now());
  s.run();
}

std::vector<TuningTrial> Store::tuning_trials(const TuningTrialFilter& f) {
  std::lock_guard lock(*mutex_);
  // "?n IS NULL OR column = ?n" lets one statement serve every combination of filters.
  std::string sql = std::string("SELECT ") + rows::kTuningColumns +
                    " FROM tuning_trials WHERE (?1 IS NULL OR kernel_hash = ?1) "
                    "AND (?2 IS NULL OR problem = ?2) AND (?3 IS NULL OR size = ?3) "
                    "AND (?4 IS NULL OR gpu_model = ?4) AND (?5 IS NULL OR driver = ?5) "
                    "AND (?6 IS NULL OR status = ?6) AND (?7 IS NULL OR world_size = ?7) "
                    "ORDER BY status != 'ok', time_us, id";
  if (f.limit > 0) sql += " LIMIT " + std::to_string(f.limit);
  Statement s(db_, sql);
  s.bind(1, f.kernel_hash).bind(2, f.problem).bind(3, f.size).bind(4, f.gpu_model);
  s.bind(5, f.driver).bind(6, f.status).bind(7, f.world_size);
  std::vector<TuningTrial> out;
  while (s.step()) out.push_back(rows::read_tuning_trial(s));
  return out;
}

void Store::record_calibration(const MachineKey& m, const nlohmann::json& result) {
  std::lock_guard lock(*mutex_);
  Statement s(db_,
              "INSERT INTO calibrations (gpu_model, gpu_count, driver, created_at, result) "
              "VALUES (?, ?, ?, ?, ?)");
  s.bind(1, m.gpu_model).bind(2, m.gpu_count).bind(3, m.driver).bind(4, utc_now());
  s.bind(5, result.dump());
  s.run();
}

std::vector<std::pair<MachineKey, nlohmann::json>> Store::latest_calibrations() {
  std::lock_guard lock(*mutex_);
  Statement s(db_,
              "SELECT gpu_model, gpu_count, driver, result FROM calibrations c WHERE id = "
              "(SELECT x.id FROM calibrations x WHERE x.gpu_model = c.gpu_model AND "
              "x.gpu_count = c.gpu_count AND x.driver = c.driver "
              "ORDER BY x.created_at DESC, x.id DESC LIMIT 1) ORDER BY created_at DESC, id DESC");
  std::vector<std::pair<MachineKey, nlohmann::json>> out;
  while (s.step())
    out.push_back({{s.text(0), int(s.int64(1)), s.text(2)}, rows::parse_json(s.text(3))});
  return out;
}

std::optional<nlohmann::json> Store::latest_calibration(const MachineKey& m) {
  std::lock_guard lock(*mutex_);
  Statement s(db_,
              "SELECT result FROM calibrations WHERE gpu_model = ? AND gpu_count = ? "
              "AND driver = ? ORDER BY created_at DESC, id DESC LIMIT 1");
  s.bind(1, m.gpu_model).bind(2, m.gpu_count).bind(3, m.driver);
  if (!s.step()) return std::nullopt;
  return rows::parse_json(s.text(0));
}

}  // namespace mgk::store
