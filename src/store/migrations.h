// The store's schema as an ordered list of migration steps: step i (1-based) takes a file
// from schema version i-1 to i. PRAGMA user_version records the version a file is at.
// Append new steps at the end; never edit a step that has shipped.
#pragma once
#include <span>

namespace mgk::store {

class Database;

struct Migration {
  const char* description;
  const char* sql;
};

// Every step of mgk's schema, oldest first. Its size is the current schema version.
std::span<const Migration> schema_migrations();

// Brings `db` to version steps.size(): applies the missing steps, each in its own
// transaction together with the new user_version (a failed step leaves the file at the
// version before it). Throws mgk::Error when the file's version is newer than steps.size()
// (written by a newer mgk). Safe when several processes open the same file at once.
// Returns the version the file was at before.
int migrate(Database& db, std::span<const Migration> steps = schema_migrations());

// The schema version recorded in the file.
int schema_version(Database& db);

// schema_version(), checked: throws mgk::Error when it is negative (no mgk writes that) or
// newer than steps.size() (a newer mgk wrote the file).
int checked_schema_version(Database& db, std::span<const Migration> steps = schema_migrations());

}  // namespace mgk::store
