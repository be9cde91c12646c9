// `mgk history`, `mgk show` and `mgk merge` as a user runs them: the built mgk binary on a
// real store file. Skipped when the mgk target has not been built.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "sample_data.h"
#include "store/store.h"
#include "support/test_paths.h"

namespace mgk::store {
namespace {

struct Ran {
  int exit_code = -1;
  std::string out, err;
};

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class CliTest : public ::testing::Test {
 protected:
  mgk::test::TempDir dir{"mgk-cli"};
  std::filesystem::path db = dir.path() / "mgk.db";
  int64_t ar = 0, ag = 0;

  void SetUp() override {
    if (!std::filesystem::exists(mgk::test::mgk_binary()))
      GTEST_SKIP() << "build the mgk target to run the CLI tests";
    Store store = Store::open(db);
    ar = test::record_sample_attempt(store, "collectives/all_reduce", "anthropic:claude-a");
    ag = test::record_sample_attempt(store, "tp/ag_gemm", "openai:gpt-b");
  }

  // Runs mgk with `args` (shell words; the test's paths have no spaces) and MGK_DB = db.
  Ran mgk(const std::string& args) {
    auto out = dir.path() / "stdout", err = dir.path() / "stderr";
    std::string cmd = "MGK_DB='" + db.string() + "' '" + mgk::test::mgk_binary().string() + "' " +
                      args + " >'" + out.string() + "' 2>'" + err.string() + "'";
    int status = std::system(cmd.c_str());
    Ran r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = slurp(out);
    r.err = slurp(err);
    return r;
  }
};

TEST_F(CliTest, HistoryListsNewestFirstAndFilters) {
  Ran all = mgk("history");
  ASSERT_EQ(all.exit_code, 0) << all.err;
  EXPECT_LT(all.out.find("tp/ag_gemm"), all.out.find("collectives/all_reduce")) << all.out;
  EXPECT_NE(all.out.find("1.50x"), std::string::npos);

  Ran tp = mgk("history --problem 'tp/*' --json");
  ASSERT_EQ(tp.exit_code, 0) << tp.err;
  auto j = nlohmann::json::parse(tp.out);
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["id"], ag);
  EXPECT_EQ(j[0]["turns"], 2);

  Ran none = mgk("history --model 'nobody:*'");
  EXPECT_EQ(none.exit_code, 0);
  EXPECT_EQ(none.out, "nothing matches\n");
}

TEST_F(CliTest, HistoryBadInputIsOneClearLine) {
  Ran date = mgk("history --since yesterday");
  EXPECT_EQ(date.exit_code, 64);
  EXPECT_NE(date.err.find("cannot read the date 'yesterday'"), std::string::npos) << date.err;

  Ran status = mgk("history --status finished");
  EXPECT_EQ(status.exit_code, 64);
  EXPECT_NE(status.err.find("valid: running, done, interrupted, failed"), std::string::npos);

  Ran missing = mgk("--db '" + (dir.path() / "nothing.db").string() + "' history");
  EXPECT_EQ(missing.exit_code, 5);  // nothing to read there
  EXPECT_NE(missing.err.find("no mgk store at"), std::string::npos) << missing.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "nothing.db"));
}

// A store this user may read but not write (a colleague's, an archive): history and show
// read it. As root (who may write anything), mgk runs as nobody to be refused the writes.
TEST_F(CliTest, AStoreThisUserCannotWriteIsStillRead) {
  auto folder = dir.path() / "read-only";
  std::filesystem::create_directory(folder);
  auto ro_db = folder / "mgk.db";
  std::filesystem::copy_file(db, ro_db);
  using std::filesystem::perms;
  std::filesystem::permissions(dir.path(), perms::owner_all | perms::others_read |
                                               perms::others_exec | perms::group_read |
                                               perms::group_exec);
  std::filesystem::permissions(ro_db, perms::owner_read | perms::group_read | perms::others_read);
  std::filesystem::permissions(folder, perms::owner_read | perms::owner_exec | perms::group_read |
                                           perms::group_exec | perms::others_read |
                                           perms::others_exec);
  const std::string as_reader =
      geteuid() == 0 ? "setpriv --reuid=65534 --regid=65534 --clear-groups " : "";
  auto run = [&](const std::string& args) {
    auto out = dir.path() / "stdout", err = dir.path() / "stderr";
    std::string cmd = as_reader + "'" + mgk::test::mgk_binary().string() + "' --db '" +
                      ro_db.string() + "' " + args + " >'" + out.string() + "' 2>'" +
                      err.string() + "'";
    int status = std::system(cmd.c_str());
    Ran r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = slurp(out);
    r.err = slurp(err);
    return r;
  };
  Ran history = run("history");
  Ran show = run("show " + std::to_string(ar));
  std::filesystem::permissions(folder, perms::owner_all);
  EXPECT_EQ(history.exit_code, 0) << history.err;
  EXPECT_NE(history.out.find("tp/ag_gemm"), std::string::npos) << history.out;
  EXPECT_EQ(show.exit_code, 0) << show.err;
  EXPECT_NE(show.out.find("collectives/all_reduce"), std::string::npos) << show.out;
}

TEST_F(CliTest, ShowPrintsTheAttemptTheKernelOrJson) {
  Ran text = mgk("show " + std::to_string(ar));
  ASSERT_EQ(text.exit_code, 0) << text.err;
  // Turns count from 1, as `mgk generate` counts them.
  EXPECT_NE(text.out.find("== turn 1: kernel"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("== turn 2: kernel"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("== turn 0"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("verdict correct"), std::string::npos);

  Ran kernel = mgk("show " + std::to_string(ar) + " --kernel");
  ASSERT_EQ(kernel.exit_code, 0) << kernel.err;
  EXPECT_EQ(kernel.out, "// right kernel for collectives/all_reduce\n");

  Ran json = mgk("show " + std::to_string(ag) + " --json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  auto j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["attempt"]["problem"], "tp/ag_gemm");
  EXPECT_EQ(j["evaluations"].size(), 2u);
}

// `mgk eval` and `mgk tune` runs have no attempts; history lists them too, by kind.
TEST_F(CliTest, HistoryListsEvalAndTuneRunsAndShowShowsOne) {
  int64_t eval_run = 0;
  {
    Store store = Store::open(db);
    eval_run = store.begin_run({"eval", "", {{"problem", "collectives/broadcast"}, {"kernel", "b.cu"}}});
    std::string k = store.put_kernel("// broadcast by hand\n");
    auto e = EvaluationRecord::from_result(test::eval_result("correct", {1.25, 1.5}), k);
    e.run_id = eval_run;
    store.record_evaluation(e);
    store.finish_run(eval_run, Status::kDone, {{"verdict", "correct"}});
    int64_t tune_run = store.begin_run({"tune", "", {{"problem", "collectives/gather"}}});
    store.finish_run(tune_run, Status::kDone, {{"stop", "max_evals"}, {"best", {{"time_us", 12.5}}}});
  }
  Ran all = mgk("history");
  ASSERT_EQ(all.exit_code, 0) << all.err;
  EXPECT_NE(all.out.find("collectives/broadcast"), std::string::npos) << all.out;
  EXPECT_NE(all.out.find("tp/ag_gemm"), std::string::npos) << all.out;

  Ran evals = mgk("history --kind eval");
  ASSERT_EQ(evals.exit_code, 0) << evals.err;
  EXPECT_NE(evals.out.find("run " + std::to_string(eval_run)), std::string::npos) << evals.out;
  EXPECT_NE(evals.out.find("done (correct)"), std::string::npos) << evals.out;
  EXPECT_NE(evals.out.find("1.25x"), std::string::npos) << evals.out;
  EXPECT_EQ(evals.out.find("tp/ag_gemm"), std::string::npos) << evals.out;
  EXPECT_EQ(evals.out.find("collectives/gather"), std::string::npos) << evals.out;

  Ran tunes = mgk("history --kind tune --json");
  ASSERT_EQ(tunes.exit_code, 0) << tunes.err;
  auto j = nlohmann::json::parse(tunes.out);
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["row"], "run");
  EXPECT_EQ(j[0]["kind"], "tune");

  Ran agents = mgk("history --kind generate,bench");
  EXPECT_EQ(agents.out.find("collectives/broadcast"), std::string::npos) << agents.out;
  EXPECT_NE(agents.out.find("tp/ag_gemm"), std::string::npos) << agents.out;
  EXPECT_EQ(mgk("history --kind evals").exit_code, 64);

  Ran shown = mgk("show --run " + std::to_string(eval_run));
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_NE(shown.out.find("run " + std::to_string(eval_run) + ": eval"), std::string::npos) << shown.out;
  EXPECT_NE(shown.out.find("verdict correct: all sizes matched"), std::string::npos) << shown.out;
  Ran missing = mgk("show --run 999");
  EXPECT_EQ(missing.exit_code, 5);
  EXPECT_NE(missing.err.find("no run 999 in"), std::string::npos) << missing.err;
}

TEST_F(CliTest, ShowUnknownIdIsOneClearLine) {
  Ran r = mgk("show 999");
  EXPECT_EQ(r.exit_code, 5);  // not found: the command line itself was fine
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "mgk: error: no attempt 999 in " + db.string() + " ('mgk history' lists them)\n");
}

TEST_F(CliTest, MergeGathersShards) {
  auto shard = dir.path() / "shard-1.db";
  {
    Store s = Store::open(shard);
    test::record_sample_attempt(s, "tp/gemm_rs");
  }
  auto all = dir.path() / "all.db";
  Ran r = mgk("merge '" + db.string() + "' '" + shard.string() + "' --into '" + all.string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("merged " + shard.string() + ": 1 run, 1 attempt, 2 turns, "),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  run ids: kept (the same here as in " + db.string() + ")"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  run ids: 1 -> 3 (" + shard.string() + " -> " + all.string() + ")"), std::string::npos)
      << "the shard's run 1 is run 3 here (after the two of the first store), and the merge says so: " << r.out;
  Ran h = mgk("--db '" + all.string() + "' history --json");
  ASSERT_EQ(h.exit_code, 0) << h.err;
  EXPECT_EQ(nlohmann::json::parse(h.out).size(), 3u);

  // A merge that fails leaves no --into it created: a missing shard is found before anything
  // is written (not found), a file that is not a store when it is read.
  const auto fresh = dir.path() / "fresh.db";
  Ran missing = mgk("merge '" + (dir.path() / "nosuch.db").string() + "' --into '" + fresh.string() + "'");
  EXPECT_EQ(missing.exit_code, 5) << missing.err;
  EXPECT_NE(missing.err.find("no store file"), std::string::npos) << missing.err;
  EXPECT_FALSE(std::filesystem::exists(fresh));
  const auto junk = dir.path() / "junk.db";
  std::ofstream(junk) << "not a database, not at all, but long enough to be read as one";
  Ran bad = mgk("merge '" + junk.string() + "' --into '" + fresh.string() + "'");
  EXPECT_NE(bad.exit_code, 0) << bad.out;
  EXPECT_FALSE(std::filesystem::exists(fresh)) << bad.err;

  Ran again = mgk("merge '" + shard.string() + "' --into '" + all.string() + "'");
  EXPECT_NE(again.out.find(": 0 runs, 0 attempts"), std::string::npos) << again.out;
  EXPECT_NE(again.out.find("(1 run already in " + all.string() + ")"), std::string::npos)
      << again.out;
}

}  // namespace
}  // namespace mgk::store
