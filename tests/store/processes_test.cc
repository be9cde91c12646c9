// The store shared between processes, and killed in the middle of writing.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>

#include "sample_data.h"
#include "store/database.h"
#include "store/statement.h"
#include "store/store.h"
#include "store/transaction.h"
#include "support/test_paths.h"

namespace mgk::store {
namespace {

// Runs `body` in a forked child; its return value is the child's exit status. The child
// never returns into the test framework.
pid_t spawn(const std::function<int()>& body) {
  pid_t pid = fork();
  if (pid == 0) {
    int code = 100;
    try {
      code = body();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "child failed: %s\n", e.what());
    }
    _exit(code);
  }
  return pid;
}

int wait_exit_code(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(Processes, AWriteInOneProcessIsSeenByAnotherConnection) {
  mgk::test::TempDir dir;
  auto path = dir.path() / "shared.db";
  Store parent = Store::open(path);
  EXPECT_TRUE(parent.history({}).empty());

  pid_t child = spawn([&] {
    Store store = Store::open(path);
    test::record_sample_attempt(store, "collectives/all_gather");
    return 0;
  });
  ASSERT_EQ(wait_exit_code(child), 0);

  auto seen = parent.history({});
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].problem, "collectives/all_gather");
  EXPECT_EQ(seen[0].turns, 2);
  EXPECT_EQ(seen[0].best_speedup, 1.5);
}

TEST(Processes, ReadersRunWhileAWriterHoldsTheLock) {
  mgk::test::TempDir dir;
  auto path = dir.path() / "busy.db";
  Store store = Store::open(path);
  test::record_sample_attempt(store, "a");

  Database writer = Database::open(path);
  Transaction tx(writer);
  writer.exec("INSERT INTO runs (uuid, kind, created_at) VALUES ('pending', 'eval', 'now')");

  // Under WAL the reader neither waits for the writer nor sees its uncommitted row.
  pid_t child = spawn([&] {
    Store reader = Store::open_read_only(path);
    bool pending_visible = reader.run(2).has_value();
    return int(reader.history({}).size()) + (pending_visible ? 10 : 0);
  });
  EXPECT_EQ(wait_exit_code(child), 1);
  tx.commit();
  EXPECT_TRUE(store.run(2).has_value());
}

TEST(Processes, TwoProcessesWritingAtOnceBothFinish) {
  mgk::test::TempDir dir;
  auto path = dir.path() / "contended.db";
  Store store = Store::open(path);
  int64_t run = store.begin_run({"bench", "m", {}});
  auto write_turns = [&](const std::string& problem) {
    Store s = Store::open(path);
    int64_t attempt = s.begin_attempt(test::attempt_start(run, problem));
    for (int i = 0; i < 40; ++i) s.record_turn(test::turn(attempt, i, 1, 1, 0.5));
    return 0;
  };
  pid_t child = spawn([&] { return write_turns("child"); });
  write_turns("parent");
  ASSERT_EQ(wait_exit_code(child), 0);
  EXPECT_EQ(store.run(run)->tokens_in, 80);
  EXPECT_DOUBLE_EQ(store.run(run)->cost_usd.value(), 40.0);
}

// A writer killed with SIGKILL at some point of its loop: every turn it reported as
// recorded is there, the totals equal the sums of the stored turns (no half-written
// turn), and the file is intact. Three rounds, killed after different numbers of turns.
TEST(Processes, ACrashLosesNothingThatWasCommitted) {
  mgk::test::TempDir dir;
  auto path = dir.path() / "crash.db";
  int64_t run = 0;
  {
    Store store = Store::open(path);
    run = store.begin_run({"bench", "m", {}});
  }
  for (int kill_after : {3, 11, 25}) {
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    pid_t child = spawn([&] {
      close(fds[0]);
      Store store = Store::open(path);
      int64_t attempt = store.begin_attempt(test::attempt_start(run, "crash"));
      for (int i = 0; i < 100000; ++i) {
        TurnRecord t = test::turn(attempt, i, 7, 3, 0.25);
        t.kernel_hash = store.put_kernel("kernel " + std::to_string(i));
        store.record_turn(t);
        int64_t ack[2] = {attempt, i};  // this turn is committed
        if (write(fds[1], ack, sizeof ack) != sizeof ack) return 2;
      }
      return 0;
    });
    close(fds[1]);
    int64_t ack[2] = {0, -1};
    while (ack[1] + 1 < kill_after && read(fds[0], ack, sizeof ack) == sizeof ack) {
    }
    kill(child, SIGKILL);
    wait_exit_code(child);
    while (read(fds[0], ack, sizeof ack) == sizeof ack) {  // acks sent before the kill
    }
    close(fds[0]);
    ASSERT_GE(ack[1] + 1, kill_after);

    Store store = Store::open(path);
    auto turns = store.turns(ack[0]);
    EXPECT_GE(int64_t(turns.size()), ack[1] + 1);
    EXPECT_LE(int64_t(turns.size()), ack[1] + 2);  // at most one committed but not reported
    auto attempt = store.attempt(ack[0]);
    EXPECT_EQ(attempt->tokens_in, 7 * int64_t(turns.size()));
    EXPECT_DOUBLE_EQ(attempt->cost_usd.value(), 0.25 * double(turns.size()));
    EXPECT_EQ(attempt->status, Status::kRunning);  // what a resume picks up
    for (const auto& t : turns) EXPECT_TRUE(store.kernel_source(*t.kernel_hash));
  }
  Database db = Database::open(path);
  EXPECT_EQ(db.pragma("integrity_check"), "ok");
  Store store = Store::open(path);
  EXPECT_EQ(store.attempts_to_resume(run).size(), 3u);
}

}  // namespace
}  // namespace mgk::store
