#include "store/migrations.h"

#include <string>

#include "common/error.h"
#include "store/database.h"
#include "store/transaction.h"

namespace mgk::store {
namespace {

// Times are ISO 8601 UTC text ("2026-01-05T12:34:56.789Z") so they sort as strings.
// JSON columns hold compact JSON text. Statuses and kinds are closed sets checked here
// and, with clearer messages, in store.cc.
constexpr Migration kSteps[] = {
    {"runs, attempts, turns, kernels, evaluations", R"sql(
CREATE TABLE runs (
  id               INTEGER PRIMARY KEY,
  uuid             TEXT NOT NULL UNIQUE,  -- stable identity across shard merges
  kind             TEXT NOT NULL CHECK (kind IN ('generate', 'bench', 'tune', 'eval')),
  model            TEXT NOT NULL DEFAULT '',
  args             TEXT NOT NULL DEFAULT '{}',
  status           TEXT NOT NULL DEFAULT 'running'
                   CHECK (status IN ('running', 'done', 'interrupted', 'failed')),
  host             TEXT NOT NULL DEFAULT '',
  pid              INTEGER,
  created_at       TEXT NOT NULL,
  ended_at         TEXT,
  summary          TEXT NOT NULL DEFAULT '{}',
  tokens_in        INTEGER NOT NULL DEFAULT 0,
  tokens_out       INTEGER NOT NULL DEFAULT 0,
  tokens_cached    INTEGER NOT NULL DEFAULT 0,
  tokens_reasoning INTEGER NOT NULL DEFAULT 0,
  cost_usd         REAL NOT NULL DEFAULT 0
);
CREATE INDEX runs_by_created ON runs(created_at);

CREATE TABLE kernels (
  hash       TEXT PRIMARY KEY,  -- SHA-256 of the source text, lowercase hex
  source     TEXT NOT NULL,
  first_seen TEXT NOT NULL
);

CREATE TABLE attempts (
  id               INTEGER PRIMARY KEY,
  run_id           INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  problem          TEXT NOT NULL,
  model            TEXT NOT NULL,
  mode             TEXT NOT NULL CHECK (mode IN ('refine', 'shell')),
  prompt_version   TEXT NOT NULL,
  sample           INTEGER NOT NULL DEFAULT 0,
  world_size       INTEGER NOT NULL DEFAULT 0,
  config           TEXT NOT NULL DEFAULT '{}',
  status           TEXT NOT NULL DEFAULT 'running'
                   CHECK (status IN ('running', 'done', 'interrupted', 'failed')),
  exit_reason      TEXT NOT NULL DEFAULT '',
  best_kernel_hash TEXT REFERENCES kernels(hash),
  started_at       TEXT NOT NULL,
  ended_at         TEXT,
  tokens_in        INTEGER NOT NULL DEFAULT 0,
  tokens_out       INTEGER NOT NULL DEFAULT 0,
  tokens_cached    INTEGER NOT NULL DEFAULT 0,
  tokens_reasoning INTEGER NOT NULL DEFAULT 0,
  cost_usd         REAL NOT NULL DEFAULT 0
);
CREATE INDEX attempts_by_run ON attempts(run_id);
CREATE INDEX attempts_by_started ON attempts(started_at);

CREATE TABLE turns (
  attempt_id       INTEGER NOT NULL REFERENCES attempts(id) ON DELETE CASCADE,
  turn_index       INTEGER NOT NULL CHECK (turn_index >= 0),
  messages         TEXT NOT NULL DEFAULT '[]',
  reply            TEXT NOT NULL DEFAULT '',
  tokens_in        INTEGER NOT NULL DEFAULT 0,
  tokens_out       INTEGER NOT NULL DEFAULT 0,
  tokens_cached    INTEGER NOT NULL DEFAULT 0,
  tokens_reasoning INTEGER NOT NULL DEFAULT 0,
  cost_usd         REAL NOT NULL DEFAULT 0,
  latency_s        REAL NOT NULL DEFAULT 0,
  finish_reason    TEXT NOT NULL DEFAULT '',
  action           TEXT NOT NULL DEFAULT '',
  kernel_hash      TEXT REFERENCES kernels(hash),
  feedback         TEXT NOT NULL DEFAULT '',
  created_at       TEXT NOT NULL,
  PRIMARY KEY (attempt_id, turn_index)
);

CREATE TABLE evaluations (
  id             INTEGER PRIMARY KEY,
  run_id         INTEGER REFERENCES runs(id) ON DELETE CASCADE,
  attempt_id     INTEGER REFERENCES attempts(id) ON DELETE CASCADE,
  turn_index     INTEGER,
  kernel_hash    TEXT NOT NULL REFERENCES kernels(hash),
  problem        TEXT NOT NULL,
  world_size     INTEGER NOT NULL,
  gpus           TEXT NOT NULL DEFAULT '[]',
  verdict        TEXT NOT NULL,
  message        TEXT NOT NULL DEFAULT '',
  speedup_min    REAL,  -- over size presets; NULL unless the verdict is correct
  speedup_median REAL,
  speedup_max    REAL,
  result         TEXT NOT NULL,  -- results::EvalResult::to_json()
  created_at     TEXT NOT NULL
);
CREATE INDEX evaluations_by_attempt ON evaluations(attempt_id);
CREATE INDEX evaluations_by_run ON evaluations(run_id);
CREATE INDEX evaluations_by_kernel ON evaluations(kernel_hash);
)sql"},

    {"tuning trials and calibrations", R"sql(
CREATE TABLE tuning_trials (
  id          INTEGER PRIMARY KEY,
  kernel_hash TEXT NOT NULL,  -- of the source without the tuner's defines
  problem     TEXT NOT NULL,
  size        TEXT NOT NULL,
  world_size  INTEGER NOT NULL,
  gpu_model   TEXT NOT NULL,
  driver      TEXT NOT NULL,
  params      TEXT NOT NULL,  -- canonical JSON (sorted keys, compact)
  status      TEXT NOT NULL
              CHECK (status IN ('ok', 'compile', 'launch', 'incorrect', 'hang', 'error')),
  time_us     REAL,
  message     TEXT NOT NULL DEFAULT '',
  created_at  TEXT NOT NULL,
  UNIQUE (kernel_hash, problem, size, world_size, gpu_model, driver, params)
);

CREATE TABLE calibrations (
  id         INTEGER PRIMARY KEY,
  gpu_model  TEXT NOT NULL,
  gpu_count  INTEGER NOT NULL,
  driver     TEXT NOT NULL,
  created_at TEXT NOT NULL,
  result     TEXT NOT NULL  -- JSON as `mgk calibrate` measured it
);
CREATE INDEX calibrations_by_machine ON calibrations(gpu_model, gpu_count, driver, created_at);
)sql"},

    // An unknown cost (a model with no price) is NULL, not 0: a turn's, and the totals of its
    // attempt and run (NULL + x is NULL, so one unknown turn makes them unknown). Dropping a
    // NOT NULL constraint leaves the stored rows as they are, so the tables' own definitions
    // are edited (SQLite's documented way for such a change, ALTER TABLE section 7) rather
    // than rebuilt: a rebuild would cascade deletes through the foreign keys. Old rows keep 0.
    {"unknown costs as NULL", R"sql(
PRAGMA writable_schema = ON;
UPDATE sqlite_schema SET sql = replace(sql, 'cost_usd         REAL NOT NULL DEFAULT 0', 'cost_usd         REAL DEFAULT 0')
 WHERE type = 'table' AND name IN ('runs', 'attempts', 'turns');
PRAGMA writable_schema = RESET;
)sql"},

    // Every stored evaluation result in the form results::EvalResult writes today, so that one
    // reader reads them all: `kernel_hash` the source's SHA-256 (the column; before 2026-12-01
    // the result held the compile-cache key there), `build_key` that cache key, `refused` a
    // field (before 2026-12-03 a refusal showed only as its message's first word).
    {"evaluation results in today's form", R"sql(
UPDATE evaluations SET result = json_set(result,
  '$.build_key', coalesce(json_extract(result, '$.build_key'), json_extract(result, '$.kernel_hash'), ''),
  '$.kernel_hash', kernel_hash,
  '$.refused', json(CASE
    WHEN json_type(result, '$.refused') IN ('true', 'false') THEN json_type(result, '$.refused')
    WHEN json_extract(result, '$.message') LIKE 'refused%' THEN 'true'
    ELSE 'false' END),
  '$.schema_version', 2)
 WHERE json_valid(result);
)sql"},
};

}  // namespace

std::span<const Migration> schema_migrations() {
  return kSteps;
}

int schema_version(Database& db) {
  return std::stoi(db.pragma("user_version"));
}

namespace {

Error too_new(Database& db, int version, int latest) {
  return Error("the mgk store " + db.path().string() + " has schema version " +
               std::to_string(version) + " but this mgk knows only up to version " +
               std::to_string(latest) + ": it was written by a newer mgk; upgrade mgk or " +
               "use another --db");
}

}  // namespace

int checked_schema_version(Database& db, std::span<const Migration> steps) {
  const int latest = int(steps.size());
  const int version = schema_version(db);
  if (version > latest) throw too_new(db, version, latest);
  // No mgk writes a negative version: a file set by hand, or another program's database.
  if (version < 0)
    throw UsageError("the mgk store " + db.path().string() + " has schema version " +
                std::to_string(version) + ", which no mgk writes: it is not an mgk store or " +
                "was changed by hand; use another --db");
  return version;
}

int migrate(Database& db, std::span<const Migration> steps) {
  const int latest = int(steps.size());
  const int before = checked_schema_version(db, steps);

  for (int next = before + 1; next <= latest; ++next) {
    Transaction tx(db);
    // Another process may have migrated while we waited for the write lock.
    int now = schema_version(db);
    if (now >= next) {
      if (now > latest) throw too_new(db, now, latest);
      next = now;
      continue;  // the transaction rolls back: nothing was written
    }
    with_context("while migrating " + db.path().string() + " to schema version " +
                     std::to_string(next) + " (" + steps[next - 1].description + ")",
                 [&] {
                   db.exec(steps[next - 1].sql);
                   db.exec("PRAGMA user_version = " + std::to_string(next));
                 });
    tx.commit();
  }
  return before;
}

}  // namespace mgk::store
