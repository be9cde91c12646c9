// A thin RAII owner of one SQLite connection, configured the way every mgk store file is
// used: WAL journal, a busy timeout so several processes can share the file, foreign keys on.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>

struct sqlite3;

namespace mgk::store {

class Database {
 public:
  enum class Mode {
    kCreate,    // create the file if it does not exist
    kReadOnly,  // the file must exist (else mgk::NotFoundError); nothing is written to it
  };

  // Opens (or creates) the file and applies the connection settings: journal_mode=WAL
  // (a warning, not an error, where the filesystem cannot do WAL), synchronous=FULL,
  // foreign_keys=ON, busy_timeout. Throws mgk::Error naming the path on failure.
  // kReadOnly changes no setting of the file. Where a WAL file cannot be read the normal
  // way (its folder is read-only, so SQLite cannot create the -shm file), it is read as
  // immutable, with a warning when a -wal file holds rows that are then not seen.
  static Database open(const std::filesystem::path& path, Mode mode = Mode::kCreate);

  Database(Database&& other) noexcept;
  Database& operator=(Database&& other) noexcept;
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;
  ~Database();

  // Runs one or more SQL statements that return no rows we need.
  void exec(const std::string& sql);

  // The value of a PRAGMA that returns one row (e.g. "journal_mode", "user_version").
  std::string pragma(const std::string& name);

  int64_t last_insert_rowid() const;
  int changes() const;  // rows changed by the last statement

  const std::filesystem::path& path() const { return path_; }
  sqlite3* handle() const { return db_; }
  // The name SQLite opened: a "file:" URI for read-only connections, for ATTACH to reuse.
  const std::string& uri() const { return uri_; }

  // Throws mgk::Error with SQLite's message for `rc` and `what` as context.
  [[noreturn]] void fail(int rc, const std::string& what) const;

  // How long a statement waits for another connection's lock before failing.
  static constexpr int kBusyTimeoutMs = 60'000;

 private:
  Database(sqlite3* db, std::filesystem::path path, std::string uri)
      : db_(db), path_(std::move(path)), uri_(std::move(uri)) {}
  static Database open_read_only(const std::filesystem::path& path);
  sqlite3* db_ = nullptr;
  std::filesystem::path path_;
  std::string uri_;
};

}  // namespace mgk::store
