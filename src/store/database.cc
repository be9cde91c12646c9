#include "store/database.h"

#include <sqlite3.h>

#include <utility>

#include "common/error.h"
#include "common/log.h"
#include "store/statement.h"

namespace mgk::store {

Database Database::open(const std::filesystem::path& path, Mode mode) {
  if (mode == Mode::kExisting && !std::filesystem::exists(path))
    throw UsageError("no mgk store at " + path.string() +
                     ": nothing has been recorded there yet (pass --db PATH or set MGK_DB)");
  if (path.has_parent_path() && !std::filesystem::exists(path.parent_path()))
    throw UsageError("cannot create the mgk store " + path.string() + ": folder " +
                     path.parent_path().string() + " does not exist");

  sqlite3* raw = nullptr;
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX;
  if (mode == Mode::kCreate) flags |= SQLITE_OPEN_CREATE;
  int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  Database db(raw, path);  // owns the handle even when open failed
  if (rc != SQLITE_OK) db.fail(rc, "opening the mgk store " + path.string());
  sqlite3_extended_result_codes(raw, 1);
  sqlite3_busy_timeout(raw, kBusyTimeoutMs);

  // The first read of the file: a file that is not SQLite fails here with a clear message.
  std::string journal = db.pragma("journal_mode=WAL");
  if (journal != "wal")
    log::warning("the mgk store " + path.string() + " cannot use WAL journaling (got '" + journal +
                 "', a network filesystem?): concurrent readers will wait for writers");
  // FULL: a finished write survives power loss too, not only a crash of mgk.
  db.exec("PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;");
  return db;
}

Database::Database(Database&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)), path_(std::move(other.path_)) {}

Database& Database::operator=(Database&& other) noexcept {
  if (this != &other) {
    if (db_ != nullptr) sqlite3_close_v2(db_);
    db_ = std::exchange(other.db_, nullptr);
    path_ = std::move(other.path_);
  }
  return *this;
}

Database::~Database() {
  if (db_ != nullptr) sqlite3_close_v2(db_);
}

void Database::exec(const std::string& sql) {
  int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) fail(rc, "running: " + sql.substr(0, 200));
}

std::string Database::pragma(const std::string& name) {
  Statement s(*this, "PRAGMA " + name);
  if (!s.step()) return "";
  return s.text(0);
}

int64_t Database::last_insert_rowid() const {
  return sqlite3_last_insert_rowid(db_);
}

int Database::changes() const {
  return sqlite3_changes(db_);
}

void Database::fail(int rc, const std::string& what) const {
  int primary = rc & 0xff;
  std::string detail = db_ != nullptr ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
  if (primary == SQLITE_BUSY || primary == SQLITE_LOCKED)
    throw Error("the mgk store " + path_.string() + " stayed locked by another process for " +
                std::to_string(kBusyTimeoutMs / 1000) + " s (" + detail +
                "); wait for it to finish or use another --db");
  if (primary == SQLITE_NOTADB)
    throw UsageError(path_.string() + " is not an mgk store (not an SQLite database)");
  if (primary == SQLITE_CANTOPEN)
    throw Error("cannot open the mgk store " + path_.string() + ": " + detail +
                " (check the path and its permissions)");
  if (primary == SQLITE_READONLY)
    throw Error("the mgk store " + path_.string() + " is read-only: " + detail +
                " (check the file's and its folder's permissions)");
  if (primary == SQLITE_FULL) throw Error("disk full writing the mgk store " + path_.string());
  Error e("SQLite error in " + path_.string() + ": " + detail);
  e.with_context("while " + what);
  throw e;
}

}  // namespace mgk::store
