#include "store/statement.h"

#include <sqlite3.h>

#include "store/database.h"

namespace mgk::store {

Statement::Statement(Database& db, std::string_view sql) : db_(db), sql_(sql) {
  int rc = sqlite3_prepare_v2(db.handle(), sql.data(), int(sql.size()), &stmt_, nullptr);
  if (rc != SQLITE_OK) db_.fail(rc, "preparing: " + sql_.substr(0, 200));
}

Statement::~Statement() {
  sqlite3_finalize(stmt_);
}

Statement& Statement::bind(int index, int64_t value) {
  int rc = sqlite3_bind_int64(stmt_, index, value);
  if (rc != SQLITE_OK) db_.fail(rc, "binding parameter " + std::to_string(index));
  return *this;
}

Statement& Statement::bind(int index, double value) {
  int rc = sqlite3_bind_double(stmt_, index, value);
  if (rc != SQLITE_OK) db_.fail(rc, "binding parameter " + std::to_string(index));
  return *this;
}

Statement& Statement::bind(int index, std::string_view value) {
  int rc =
      sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  if (rc != SQLITE_OK) db_.fail(rc, "binding parameter " + std::to_string(index));
  return *this;
}

Statement& Statement::bind_null(int index) {
  int rc = sqlite3_bind_null(stmt_, index);
  if (rc != SQLITE_OK) db_.fail(rc, "binding parameter " + std::to_string(index));
  return *this;
}

bool Statement::step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  // Reset so the failed statement releases its locks before the error travels up.
  sqlite3_reset(stmt_);
  db_.fail(rc, "running: " + sql_.substr(0, 200));
}

void Statement::run() {
  while (step()) {
  }
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

bool Statement::is_null(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

int64_t Statement::int64(int column) const {
  return sqlite3_column_int64(stmt_, column);
}

double Statement::real(int column) const {
  return sqlite3_column_double(stmt_, column);
}

std::string Statement::text(int column) const {
  const unsigned char* p = sqlite3_column_text(stmt_, column);
  if (p == nullptr) return "";
  return std::string(reinterpret_cast<const char*>(p), size_t(sqlite3_column_bytes(stmt_, column)));
}

std::optional<int64_t> Statement::optional_int64(int column) const {
  if (is_null(column)) return std::nullopt;
  return int64(column);
}

std::optional<double> Statement::optional_real(int column) const {
  if (is_null(column)) return std::nullopt;
  return real(column);
}

std::optional<std::string> Statement::optional_text(int column) const {
  if (is_null(column)) return std::nullopt;
  return text(column);
}

}  // namespace mgk::store
