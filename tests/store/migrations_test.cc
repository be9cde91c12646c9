#include "store/migrations.h"

#include <gtest/gtest.h>

#include <fstream>

#include "common/error.h"
#include "common/file.h"
#include "common/hash.h"
#include "store/database.h"
#include "store/statement.h"
#include "store/store.h"
#include "support/test_paths.h"

namespace mgk::store {
namespace {

bool has_table(Database& db, const std::string& name) {
  Statement s(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?");
  s.bind(1, name);
  return s.step();
}

int latest() {
  return int(schema_migrations().size());
}

TEST(Migrations, EmptyFileGetsTheWholeSchema) {
  mgk::test::TempDir dir;
  auto path = dir.path() / "fresh.db";
  { Store::open(path); }
  Database db = Database::open(path);
  EXPECT_EQ(schema_version(db), latest());
  for (const char* table :
       {"runs", "attempts", "turns", "kernels", "evaluations", "tuning_trials", "calibrations"})
    EXPECT_TRUE(has_table(db, table)) << table;
  EXPECT_EQ(db.pragma("foreign_keys"), "1");
}

TEST(Migrations, OlderFileIsMigratedAndKeepsItsRows) {
  ASSERT_GE(latest(), 2) << "this test needs a schema with at least two steps";
  mgk::test::TempDir dir;
  auto path = dir.path() / "old.db";
  {
    Database db = Database::open(path);
    EXPECT_EQ(migrate(db, schema_migrations().first(1)), 0);
    EXPECT_EQ(schema_version(db), 1);
    EXPECT_FALSE(has_table(db, "tuning_trials"));
    db.exec(
        "INSERT INTO runs (uuid, kind, created_at) VALUES ('u1', 'bench', "
        "'2026-01-01T00:00:00.000Z')");
  }
  Store store = Store::open(path);
  auto run = store.run(1);
  ASSERT_TRUE(run.has_value());
  EXPECT_EQ(run->kind, "bench");
  EXPECT_EQ(run->status, Status::kRunning);
  // The new step's tables work.
  TuningTrial t{"k", "p", "small", 2, "H200", "580", {{"A", 1}}, "ok", 3.5, ""};
  store.record_tuning_trial(t);
  EXPECT_TRUE(store.find_tuning_trial(t.key()).has_value());
  Database db = Database::open(path);
  EXPECT_EQ(schema_version(db), latest());
}

// Schema 3: an unknown cost (a model with no price) is stored as NULL, not 0. A file of
// schema 2 keeps every row (no cascade through the foreign keys) and its known costs; a turn
// of unknown cost then makes its attempt's and its run's totals unknown.
TEST(Migrations, UnknownCostsAreStoredAsNullAndOldRowsKeepTheirs) {
  ASSERT_GE(latest(), 3);
  mgk::test::TempDir dir;
  auto path = dir.path() / "v2.db";
  {
    Database db = Database::open(path);
    migrate(db, schema_migrations().first(2));
    db.exec(
        "INSERT INTO runs (uuid, kind, model, created_at, cost_usd) VALUES ('u1', 'bench', 'vllm:q', "
        "'2026-01-01T00:00:00.000Z', 0.5);"
        "INSERT INTO attempts (run_id, problem, model, mode, prompt_version, started_at, cost_usd) VALUES "
        "(1, 'collectives/all_reduce', 'vllm:q', 'refine', 'v1', '2026-01-01T00:00:00.000Z', 0.5);"
        "INSERT INTO turns (attempt_id, turn_index, created_at, cost_usd) VALUES (1, 0, '2026-01-01T00:00:00.000Z', 0.5);");
    EXPECT_THROW(db.exec("UPDATE turns SET cost_usd = NULL"), Error) << "schema 2 holds no NULL cost";
  }
  Store store = Store::open(path);
  ASSERT_EQ(store.turns(1).size(), 1u) << "the rows survive the migration";
  EXPECT_EQ(store.turns(1)[0].cost_usd, 0.5);
  EXPECT_EQ(store.attempt(1)->cost_usd, 0.5);
  TurnRecord t;
  t.attempt_id = 1;
  t.index = 1;
  t.cost_usd = std::nullopt;  // the model has no price
  store.record_turn(t);
  EXPECT_EQ(store.turns(1)[1].cost_usd, std::nullopt);
  EXPECT_EQ(store.attempt(1)->cost_usd, std::nullopt) << "one unknown turn: the attempt's total is unknown";
  EXPECT_EQ(store.run(1)->cost_usd, std::nullopt);
  Database db = Database::open(path);
  EXPECT_EQ(db.pragma("integrity_check"), "ok");
}

// Schema 4: evaluation results stored in an older form are rewritten into today's, so that
// one reader reads them all: the refusal a field (before 2026-12-03 only the message's first
// word said it), the build key beside the source's hash (before 2026-12-01 the result held
// the build key as its kernel_hash).
TEST(Migrations, OlderEvaluationResultsAreRewrittenIntoTodaysForm) {
  ASSERT_GE(latest(), 4);
  mgk::test::TempDir dir;
  auto path = dir.path() / "v3.db";
  {
    Database db = Database::open(path);
    migrate(db, schema_migrations().first(3));
    db.exec(
        "INSERT INTO runs (uuid, kind, created_at) VALUES ('u1', 'eval', '2026-12-01T00:00:00.000Z');"
        "INSERT INTO kernels (hash, source, first_seen) VALUES ('src1', 'k', '2026-12-01T00:00:00.000Z');"
        "INSERT INTO evaluations (run_id, kernel_hash, problem, world_size, verdict, message, result, created_at) VALUES"
        " (1, 'src1', 'collectives/all_reduce', 2, 'runtime_error', 'refused: cudaMemcpyPeer is not allowed',"
        "  '{\"verdict\":\"runtime_error\",\"message\":\"refused: cudaMemcpyPeer is not allowed\",\"kernel_hash\":\"key1\"}',"
        "  '2026-12-01T00:00:00.000Z'),"
        " (1, 'src1', 'collectives/all_reduce', 2, 'runtime_error', 'the process of rank 1 ended (signal 11)',"
        "  '{\"verdict\":\"runtime_error\",\"message\":\"the process of rank 1 ended (signal 11)\",\"kernel_hash\":\"src1\",\"build_key\":\"key2\",\"refused\":false}',"
        "  '2026-12-02T00:00:00.000Z');");
  }
  Store store = Store::open(path);
  const auto evaluations = store.evaluations_of_run(1);
  ASSERT_EQ(evaluations.size(), 2u) << "the rows survive the migration";
  const results::EvalResult& old = evaluations[0].result;
  EXPECT_TRUE(old.refused) << "read from the message it was stored with";
  EXPECT_EQ(old.kernel_hash, "src1") << "the source's hash, as the row's column";
  EXPECT_EQ(old.build_key, "key1") << "what the old result held as its kernel_hash";
  const results::EvalResult& newer = evaluations[1].result;
  EXPECT_FALSE(newer.refused);
  EXPECT_EQ(newer.kernel_hash, "src1");
  EXPECT_EQ(newer.build_key, "key2");
  Database db = Database::open(path);
  Statement s(db, "SELECT json_extract(result, '$.schema_version'), json_type(result, '$.refused') FROM evaluations");
  while (s.step()) {
    EXPECT_EQ(s.int64(0), 2);
    EXPECT_TRUE(s.text(1) == "true" || s.text(1) == "false") << "a JSON boolean: " << s.text(1);
  }
}

TEST(Migrations, NewerFileIsRefusedWithAClearMessage) {
  mgk::test::TempDir dir;
  auto path = dir.path() / "future.db";
  {
    Database db = Database::open(path);
    migrate(db);
    db.exec("PRAGMA user_version = " + std::to_string(latest() + 3));
  }
  try {
    Store::open(path);
    FAIL() << "opening a newer store should throw";
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("schema version " + std::to_string(latest() + 3)), std::string::npos) << m;
    EXPECT_NE(m.find("newer mgk"), std::string::npos) << m;
  }
}

TEST(Migrations, ANegativeVersionIsOneClearErrorNotACrash) {
  mgk::test::TempDir dir;
  auto path = dir.path() / "minus.db";
  {
    Database db = Database::open(path);
    db.exec("PRAGMA user_version = -1");
  }
  for (auto open : {&Store::open, &Store::open_read_only}) {
    try {
      open(path);
      FAIL() << "a store at version -1 should be refused";
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()),
                "the mgk store " + path.string() +
                    " has schema version -1, which no mgk writes: it is not an mgk store or was "
                    "changed by hand; use another --db");
    }
  }
}

TEST(Migrations, AFailingStepLeavesTheFileAtThePreviousVersion) {
  const Migration steps[] = {
      {"first", "CREATE TABLE a (x INTEGER);"},
      {"broken", "CREATE TABLE b (x INTEGER); INSERT INTO no_such_table VALUES (1);"},
  };
  mgk::test::TempDir dir;
  Database db = Database::open(dir.path() / "broken.db");
  try {
    migrate(db, steps);
    FAIL() << "the broken step should throw";
  } catch (const Error& e) {
    ASSERT_FALSE(e.context().empty());
    EXPECT_NE(e.context().back().find("schema version 2 (broken)"), std::string::npos);
  }
  EXPECT_EQ(schema_version(db), 1);
  EXPECT_TRUE(has_table(db, "a"));
  EXPECT_FALSE(has_table(db, "b"));  // rolled back with the failed step
}

TEST(Migrations, MigratingTwiceIsANoOp) {
  mgk::test::TempDir dir;
  Database db = Database::open(dir.path() / "twice.db");
  EXPECT_EQ(migrate(db), 0);
  EXPECT_EQ(migrate(db), latest());
  EXPECT_EQ(schema_version(db), latest());
}

TEST(Database, UsesWalJournal) {
  mgk::test::TempDir dir;
  auto path = dir.path() / "wal.db";
  Store store = Store::open(path);
  store.begin_run({"eval", "", {}});
  Database db = Database::open(path);
  EXPECT_EQ(db.pragma("journal_mode"), "wal");
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "wal.db-wal"));
}

TEST(Database, WritesAreSynchronousFull) {
  mgk::test::TempDir dir;
  Database db = Database::open(dir.path() / "full.db");
  EXPECT_EQ(db.pragma("synchronous"), "2");  // FULL: a finished write survives power loss
}

TEST(Database, ReadingOnlyChangesNothingInTheFile) {
  mgk::test::TempDir dir;
  auto path = dir.path() / "delete-journal.db";
  {
    Store store = Store::open(path);
    store.begin_run({"eval", "", {}});
  }
  {
    Database db = Database::open(path);
    db.exec("PRAGMA journal_mode=DELETE");
  }
  const std::string before = sha256_hex(read_file(path, "the store"));
  {
    Store store = Store::open_read_only(path);
    EXPECT_TRUE(store.run(1));
    EXPECT_THROW(store.begin_run({"eval", "", {}}), Error);  // read-only: refused
  }
  EXPECT_EQ(sha256_hex(read_file(path, "the store")), before);
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "delete-journal.db-wal"));
  Database db = Database::open(path, Database::Mode::kReadOnly);
  EXPECT_EQ(db.pragma("journal_mode"), "delete");
}

TEST(Database, AFileThatIsNotSqliteIsAUsageError) {
  mgk::test::TempDir dir;
  auto path = dir.path() / "notes.db";
  std::ofstream(path) << "these are not the rows you are looking for, padded to a page........"
                      << std::string(200, '.');
  try {
    Store::open(path);
    FAIL() << "should throw";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("not an mgk store"), std::string::npos) << e.what();
  }
}

TEST(Database, OpenReadOnlyRefusesAMissingFileAndCreatesNothing) {
  mgk::test::TempDir dir;
  auto path = dir.path() / "missing.db";
  EXPECT_THROW(Store::open_read_only(path), NotFoundError);
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(Database, MissingFolderIsAUsageError) {
  mgk::test::TempDir dir;
  EXPECT_THROW(Store::open(dir.path() / "no" / "such" / "dir.db"), UsageError);
}

}  // namespace
}  // namespace mgk::store
