// An explicit write transaction: BEGIN IMMEDIATE on construction (so the write lock is taken
// up front and waits on the busy timeout, instead of failing when a read turns into a
// write), COMMIT on commit(), ROLLBACK if destroyed without commit (an exception passed).
#pragma once

namespace mgk::store {

class Database;

class Transaction {
 public:
  explicit Transaction(Database& db);
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction();

  void commit();

 private:
  Database& db_;
  bool done_ = false;
};

}  // namespace mgk::store
