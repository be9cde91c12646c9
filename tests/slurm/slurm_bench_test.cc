// `mgk bench --executor slurm` on a real Slurm: a one-node cluster of the test's own
// (tests/support/slurm_cluster.h: munged, slurmctld and slurmd as root), the scripted model
// over loopback HTTP (tests/bench_run/scripted_suite.h), real nvcc, --compile-only. Four problems
// as a job array of three tasks, one task cancelled part way (scancel), the run resumed,
// its shards merged (twice) and its report compared with a local run of the same work.
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "bench_run/scripted_suite.h"
#include "common/file.h"
#include "report/bench_store.h"
#include "store/store.h"
#include "support/mgk_cli.h"
#include "support/slurm_cluster.h"
#include "support/test_paths.h"

namespace mgk::bench_run::testing {
namespace {

using std::chrono::steady_clock;

const char* kKey = "sk-test-slurm-4f1c9e";  // must travel in the environment only

class SlurmBench : public ::testing::Test {
 protected:
  SlurmBench() {
    // Each reply waits a little, scatter's (the second attempt of task 0) long enough that
    // the test sees task 0 half done and cancels it there.
    server_.respond_with([](const test::RecordedRequest& r) {
      const bool slow = problem_and_turn(r).first == "collectives/scatter";
      return suite_response(r, std::chrono::milliseconds(slow ? 3000 : 300));
    });
    std::ofstream(dir_.path() / "config.json") << R"({"prices": {"gpt-test": {"input": 100, "output": 100}}})";
  }
  std::map<std::string, std::string> env(const std::string& name) {
    std::map<std::string, std::string> e = {{"MGK_HOME", (dir_.path() / (name + "-home")).string()},
                                            {"MGK_DB", db(name).string()},
                                            {"MGK_CONFIG", (dir_.path() / "config.json").string()},
                                            {"OPENAI_API_KEY", kKey},
                                            {"OPENAI_BASE_URL", server_.url() + "/v1"}};
    if (cluster_)
      for (const auto& [k, v] : cluster_->env()) e[k] = v;
    return e;
  }
  std::filesystem::path db(const std::string& name) { return dir_.path() / (name + ".db"); }
  static std::vector<std::string> bench_args(std::vector<std::string> extra = {}) {
    // all_gather, gather, reduce_scatter, scatter: shards {all_gather, scatter}, {gather},
    // {reduce_scatter}; with two CPUs on the node, two tasks run at once and one waits.
    std::vector<std::string> a = {"bench", "--model", "openai:gpt-test", "--problems", "collectives/*a*er", "--samples", "1",
                                  "--turns", "2", "--jobs", "1", "--compile-only"};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  }
  nlohmann::json status() {
    test::CliResult r = test::run_mgk({"bench", "--status", "1", "--json"}, env("slurm"));
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return nlohmann::json::parse(r.output, nullptr, false);
  }
  // Polls until `ready`, at most `limit`; false (with what the tasks logged) when it never is.
  template <typename Ready>
  ::testing::AssertionResult eventually(Ready ready, std::chrono::seconds limit, const std::string& what) {
    const auto deadline = steady_clock::now() + limit;
    while (steady_clock::now() < deadline) {
      if (ready()) return ::testing::AssertionSuccess();
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    std::string logs;
    for (int k = 0; k < 3; ++k)
      if (std::filesystem::exists(folder_ / ("task-" + std::to_string(k) + ".log")))
        logs += read_file(folder_ / ("task-" + std::to_string(k) + ".log"));
    return ::testing::AssertionFailure() << "not within " << limit.count() << " s: " << what << "\nstatus "
                                         << status().dump() << "\n" << logs << cluster_->logs();
  }
  nlohmann::json report(const std::string& name) {
    test::CliResult r = test::run_mgk({"report", "1", "--format", "json"}, env(name));
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return report::test::without_run_dependent_fields(r.json());
  }

  test::TempDir dir_{"mgk-slurm"};
  test::ScriptedServer server_;
  std::unique_ptr<test::SlurmCluster> cluster_;
  std::filesystem::path folder_;  // the run's: script, run.json, task-K.{db,log}
};

TEST_F(SlurmBench, AJobArrayWithATaskCancelledAndResumedMergesIntoTheReportOfALocalRun) {
  if (geteuid() != 0)
    GTEST_SKIP() << "skipped: this test starts its own slurmd, which runs jobs as their users and needs root; it "
                    "runs as uid "
                 << geteuid();
  if (const std::string missing = test::SlurmCluster::missing_commands(); !missing.empty())
    FAIL() << "Slurm is not installed (missing " << missing
           << "): run scripts/setup.sh, which installs Debian's slurm-wlm and munge";
  const auto start = steady_clock::now();
  test::CliResult local = test::run_mgk(bench_args(), env("local"));
  ASSERT_EQ(local.exit_code, 0) << local.output;

  try {
    cluster_ = std::make_unique<test::SlurmCluster>(dir_.path() / "cluster", dir_.path());
  } catch (const std::exception& e) {
    FAIL() << "the one-node Slurm did not start: " << e.what();
  }
  const auto up = steady_clock::now();
  const std::vector<std::string> on_slurm = bench_args({"--executor", "slurm", "--array-tasks", "3", "--time", "20:00"});
  test::CliResult submit = test::run_mgk(on_slurm, env("slurm"));
  ASSERT_EQ(submit.exit_code, 0) << submit.output;
  EXPECT_NE(submit.output.find("submitted to Slurm as job "), std::string::npos) << submit.output;
  {
    store::Store s = store::Store::open_read_only(db("slurm"));
    folder_ = dir_.path() / "slurm" / s.run(1)->uuid;
  }
  const std::string script = read_file(folder_ / "job.sbatch");
  std::cout << "the generated script:\n" << script;
  EXPECT_NE(script.find("#SBATCH --export=ALL"), std::string::npos);
  EXPECT_NE(script.find(": \"${OPENAI_API_KEY:?"), std::string::npos);
  EXPECT_EQ(script.find(kKey), std::string::npos) << "the key is in the script";

  // Task 0 (all_gather, then scatter) cancelled once all_gather is done, scatter in flight.
  ASSERT_TRUE(eventually([&] { return status()["tasks"][0]["finished"] == 1; }, std::chrono::minutes(3),
                         "task 0 finishes its first attempt"));
  const nlohmann::json before = status();
  ASSERT_EQ(before["tasks"][0]["state"], "running") << before.dump();
  const std::string job = before["jobs"][0];
  cluster_->run({"scancel", job + "_0"});
  ASSERT_TRUE(eventually([&] { return status()["tasks"][0]["state"] == "failed"; }, std::chrono::minutes(1),
                         "task 0 is seen failed once cancelled"));
  const nlohmann::json cancelled = status();
  EXPECT_EQ(cancelled["tasks"][0]["finished"], 1) << "cancelled part way: " << cancelled.dump();
  EXPECT_EQ(cancelled["tasks"][0]["slurm_state"], "CANCELLED") << cancelled.dump();
  test::CliResult text = test::run_mgk({"bench", "--status", "1"}, env("slurm"));
  EXPECT_EQ(text.exit_code, 0) << text.output;
  std::cout << text.output;
  for (const std::string& part : std::vector<std::string>{"run 1 on Slurm (job " + job + ")",
                                                          (folder_ / "task-0.log").string(), "CANCELLED",
                                                          "'mgk bench --resume 1' submits the failed task(s) again"})
    EXPECT_NE(text.output.find(part), std::string::npos) << part << "\n" << text.output;

  test::CliResult resume = test::run_mgk({"bench", "--resume", "1"}, env("slurm"));
  ASSERT_EQ(resume.exit_code, 0) << resume.output;
  EXPECT_NE(resume.output.find("run 1: task(s) 0 submitted again as job "), std::string::npos) << resume.output;
  ASSERT_TRUE(eventually(
      [&] {
        const nlohmann::json s = status();
        for (const auto& t : s["tasks"])
          if (t["state"] != "done") return false;
        return true;
      },
      std::chrono::minutes(3), "every task done"));
  EXPECT_EQ(status()["jobs"].size(), 2u);
  // The first command again finds the run and has nothing left to submit.
  test::CliResult same = test::run_mgk(on_slurm, env("slurm"));
  EXPECT_EQ(same.exit_code, 0) << same.output;
  EXPECT_NE(same.output.find("run 1: every task is done: 'mgk bench --merge 1' gathers the shards"), std::string::npos)
      << same.output;
  EXPECT_EQ(status()["jobs"].size(), 2u) << "nothing submitted";
  const std::string log0 = read_file(folder_ / "task-0.log");
  std::cout << "task-0.log:\n" << log0;
  EXPECT_NE(log0.find("1 of 2 attempts were finished before: skipped"), std::string::npos) << log0;

  // mgk merge of the shards, twice: the second adds nothing and changes no report.
  std::vector<std::string> merge = {"merge"};
  for (int k = 0; k < 3; ++k) merge.push_back((folder_ / ("task-" + std::to_string(k) + ".db")).string());
  merge.insert(merge.end(), {"--into", db("slurm").string()});
  test::CliResult first = test::run_mgk(merge, env("slurm"));
  ASSERT_EQ(first.exit_code, 0) << first.output;
  const nlohmann::json once = report("slurm");
  test::CliResult again = test::run_mgk(merge, env("slurm"));
  ASSERT_EQ(again.exit_code, 0) << again.output;
  std::stringstream lines(again.output);
  for (std::string line; std::getline(lines, line);)  // a shard's line, then how its run ids map
    if (line.rfind("  run ids: ", 0) != 0)
      EXPECT_NE(line.find(": 0 runs, 0 attempts, 0 turns, 0 evaluations"), std::string::npos) << line;
  EXPECT_EQ(report("slurm"), once);
  // --merge does the same and ends the run, as a local run ends, with its report.
  test::CliResult merged = test::run_mgk({"bench", "--merge", "1"}, env("slurm"));
  ASSERT_EQ(merged.exit_code, 0) << merged.output;
  EXPECT_NE(merged.output.find("compiles@1"), std::string::npos) << merged.output;
  {
    store::Store s = store::Store::open_read_only(db("slurm"));
    EXPECT_EQ(s.run(1)->status, store::Status::kDone);
    EXPECT_EQ(s.attempts_of_run(1).size(), 4u) << "each (problem, sample) once";
  }
  const nlohmann::json expected = report("local"), got = report("slurm");
  ASSERT_FALSE(expected.is_null());
  EXPECT_EQ(got, expected);
  EXPECT_EQ(expected["runs"][0]["metrics"]["finished"], 4);

  // The key went to the model (through the environment sbatch passed on) and nowhere else.
  for (const auto& r : server_.requests()) EXPECT_EQ(r.header("authorization"), std::string("Bearer ") + kKey);
  for (const auto& f : std::filesystem::recursive_directory_iterator(dir_.path() / "slurm")) {
    if (!f.is_regular_file()) continue;
    EXPECT_EQ(read_file(f.path()).find(kKey), std::string::npos) << f.path();
  }
  EXPECT_EQ(read_file(db("slurm")).find(kKey), std::string::npos);
  std::cout << "local run and Slurm start " << std::chrono::duration<double>(up - start).count()
            << " s, the Slurm run " << std::chrono::duration<double>(steady_clock::now() - up).count() << " s\n";
}

}  // namespace
}  // namespace mgk::bench_run::testing
