// A prepared SQLite statement: bind parameters (1-based, as SQLite counts), step through
// rows, read columns (0-based). Finalized when destroyed. Errors throw mgk::Error.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

struct sqlite3_stmt;

namespace mgk::store {

class Database;

class Statement {
 public:
  Statement(Database& db, std::string_view sql);
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  // Bind by position; a nullopt binds NULL. Return *this so binds chain.
  Statement& bind(int index, int64_t value);
  Statement& bind(int index, int value) { return bind(index, int64_t(value)); }
  Statement& bind(int index, double value);
  Statement& bind(int index, std::string_view value);
  Statement& bind(int index, const char* value) { return bind(index, std::string_view(value)); }
  Statement& bind(int index, const std::string& value) {
    return bind(index, std::string_view(value));
  }
  Statement& bind_null(int index);
  template <typename T>
  Statement& bind(int index, const std::optional<T>& value) {
    return value ? bind(index, *value) : bind_null(index);
  }

  // Advances to the next row: true while there is one, false when done.
  bool step();
  // Runs a statement that returns no rows.
  void run();
  // Clears the bindings and rewinds, for executing the statement again.
  void reset();

  bool is_null(int column) const;
  int64_t int64(int column) const;
  double real(int column) const;
  std::string text(int column) const;  // NULL reads as ""
  std::optional<int64_t> optional_int64(int column) const;
  std::optional<double> optional_real(int column) const;
  std::optional<std::string> optional_text(int column) const;

 private:
  Database& db_;
  sqlite3_stmt* stmt_ = nullptr;
  std::string sql_;
};

}  // namespace mgk::store
