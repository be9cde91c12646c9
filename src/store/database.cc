#include "store/database.h"

#include <sqlite3.h>

#include <cstdio>
#include <utility>

#include "common/error.h"
#include "common/log.h"
#include "store/statement.h"

namespace mgk::store {

namespace {

// A path as a "file:" URI (RFC 3986: '%', '?' and '#' escaped) with the given query.
std::string file_uri(const std::filesystem::path& path, const std::string& query) {
  std::string uri = "file:";
  for (char c : std::filesystem::absolute(path).string()) {
    if (c == '%' || c == '?' || c == '#') {
      char hex[4];
      std::snprintf(hex, sizeof hex, "%%%02X", static_cast<unsigned char>(c));
      uri += hex;
    } else {
      uri += c;
    }
  }
  return uri + "?" + query;
}

// Opens `uri` read-only and reads the header, the first read that needs the WAL index.
int try_open_read_only(const std::string& uri, sqlite3** out) {
  int rc = sqlite3_open_v2(uri.c_str(), out,
                           SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI, nullptr);
  if (rc == SQLITE_OK) rc = sqlite3_exec(*out, "PRAGMA user_version", nullptr, nullptr, nullptr);
  return rc;
}

}  // namespace

Database Database::open(const std::filesystem::path& path, Mode mode) {
  if (mode == Mode::kReadOnly && !std::filesystem::exists(path))
    throw NotFoundError("no mgk store at " + path.string() +
                        ": nothing has been recorded there yet (pass --db PATH or set MGK_DB)");
  if (mode == Mode::kReadOnly) return open_read_only(path);
  if (path.has_parent_path() && !std::filesystem::exists(path.parent_path()))
    throw UsageError("cannot create the mgk store " + path.string() + ": folder " +
                     path.parent_path().string() + " does not exist");

  sqlite3* raw = nullptr;
  // URI names are understood so that a shard can be attached read-only (store_merge.cc).
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI;
  int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  Database db(raw, path, path.string());  // owns the handle even when open failed
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

Database Database::open_read_only(const std::filesystem::path& path) {
  std::string uri = file_uri(path, "mode=ro");
  sqlite3* raw = nullptr;
  int rc = try_open_read_only(uri, &raw);
  if ((rc & 0xff) == SQLITE_READONLY || (rc & 0xff) == SQLITE_CANTOPEN) {
    // A WAL file whose folder we cannot write: SQLite cannot create its -shm index. Read
    // it as immutable (no locks, no index); what only the -wal file holds is not seen.
    sqlite3_close_v2(raw);
    raw = nullptr;
    uri = file_uri(path, "immutable=1");
    rc = try_open_read_only(uri, &raw);
    std::error_code ec;
    auto wal = std::filesystem::path(path.string() + "-wal");
    if (rc == SQLITE_OK && std::filesystem::file_size(wal, ec) > 0 && !ec)
      log::warning("reading " + path.string() + " without its write-ahead log " + wal.string() +
                   " (the folder is read-only): the newest rows may be missing");
  }
  Database db(raw, path, uri);
  if (rc != SQLITE_OK) db.fail(rc, "opening the mgk store " + path.string() + " read-only");
  sqlite3_extended_result_codes(raw, 1);
  sqlite3_busy_timeout(raw, kBusyTimeoutMs);
  return db;
}

Database::Database(Database&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)),
      path_(std::move(other.path_)),
      uri_(std::move(other.uri_)) {}

Database& Database::operator=(Database&& other) noexcept {
  if (this != &other) {
    if (db_ != nullptr) sqlite3_close_v2(db_);
    db_ = std::exchange(other.db_, nullptr);
    path_ = std::move(other.path_);
    uri_ = std::move(other.uri_);
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
  if (primary == SQLITE_CORRUPT)
    throw Error("the mgk store " + path_.string() + " is damaged (" + detail +
                "); restore it from a copy, or save what SQLite can read: sqlite3 " +
                path_.string() + " .recover | sqlite3 recovered.db");
  Error e("SQLite error in " + path_.string() + ": " + detail);
  e.with_context("while " + what);
  throw e;
}

}  // namespace mgk::store
