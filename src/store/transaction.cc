#include "store/transaction.h"

#include <sqlite3.h>

#include "store/database.h"

namespace mgk::store {

Transaction::Transaction(Database& db) : db_(db) {
  db_.exec("BEGIN IMMEDIATE");
}

Transaction::~Transaction() {
  // A failed COMMIT or a statement error may already have ended the transaction.
  if (!done_ && sqlite3_get_autocommit(db_.handle()) == 0)
    sqlite3_exec(db_.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
}

void Transaction::commit() {
  db_.exec("COMMIT");
  done_ = true;
}

}  // namespace mgk::store
